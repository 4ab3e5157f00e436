package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// pathCache remembers where commands were found in PATH, as a shell's
// hash table does, so a launch stats one file instead of every PATH
// directory. A cached path is checked before use; a command that moved
// is looked up afresh.
type pathCache struct {
	mu    sync.Mutex
	found map[[2]string]string // (name, PATH) -> path
}

func newPathCache() *pathCache { return &pathCache{found: map[[2]string]string{}} }

// lookPath finds name the way a shell would with the PATH in env.
func (c *pathCache) lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	pathEnv := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	key := [2]string{name, pathEnv}
	c.mu.Lock()
	cached, ok := c.found[key]
	c.mu.Unlock()
	if ok && executable(cached) == nil {
		return cached, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			c.mu.Lock()
			c.found[key] = p
			c.mu.Unlock()
			return p, nil
		}
	}
	return "", &notFoundError{fmt.Sprintf("command %q not found in PATH", name)}
}

// makeAttemptDir creates dir and its outputs directory. The run and task
// directories above it usually exist already, so it tries the direct
// mkdir first and walks up only when a parent is missing. With traverse,
// the directories it makes are 0711 whatever the umask, so that tasks
// running as other users reach their attempt without listing others. It
// reports whether it made dir: false if dir was there.
func makeAttemptDir(dir string, traverse bool) (bool, error) {
	made := []string{dir}
	err := os.Mkdir(dir, 0o755)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// The task's directory is new too (a task's first attempt), and
		// perhaps the run's (its first task).
		made = append(made, filepath.Dir(dir), filepath.Dir(filepath.Dir(dir)))
		err = mkdirParent(dir)
	case errors.Is(err, os.ErrExist):
		made, err = nil, nil
	}
	if err != nil {
		return false, err
	}
	for _, d := range made {
		if !traverse {
			break
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return false, err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, outputsDir), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return false, err
	}
	return made != nil, nil
}

// mkdirParent makes dir whose parent is missing: the parent first, and
// its parent only if that is missing too, with one call per directory
// where os.MkdirAll would look at each first.
func mkdirParent(dir string) error {
	parent := filepath.Dir(dir)
	err := os.Mkdir(parent, 0o755)
	if errors.Is(err, os.ErrNotExist) {
		err = os.MkdirAll(parent, 0o755)
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.Mkdir(dir, 0o755)
}
