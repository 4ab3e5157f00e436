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

// makeAttemptDir creates dir and its outputs directory, and reports
// whether it made dir: false if dir was there. It knows from the
// attempt's number which directories above dir exist, rather than trying
// and walking up: a task's first attempt makes the task's directory
// (and the run's, the first time the run's is found missing), a later
// attempt only its own. So a launch makes two or three directories and
// no call fails, unless something removed what the number says is there.
// With traverse, the directories it makes are 0711 whatever the umask, so
// that tasks running as other users reach their attempt without listing
// others.
func makeAttemptDir(dir string, first, traverse bool) (bool, error) {
	var made []string
	if first {
		m, err := makeTaskDir(filepath.Dir(dir))
		if err != nil {
			return false, err
		}
		made = m
	}
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrNotExist) && !first { // its task's directory was removed
		if made, err = makeTaskDir(filepath.Dir(dir)); err == nil {
			err = os.Mkdir(dir, 0o755)
		}
	}
	fresh := err == nil
	if errors.Is(err, os.ErrExist) {
		err = nil
	}
	if err != nil {
		return false, err
	}
	if fresh {
		made = append(made, dir)
	}
	for _, d := range made {
		if !traverse {
			break
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return false, err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, outputsDir), 0o755); err != nil && (fresh || !errors.Is(err, os.ErrExist)) {
		return false, err
	}
	return fresh, nil
}

// makeTaskDir makes a task's directory, and its run's if that is
// missing, with one call per directory where os.MkdirAll would look at
// each first. It returns the directories it made: none if the task's was
// there.
func makeTaskDir(task string) ([]string, error) {
	err := os.Mkdir(task, 0o755)
	switch {
	case err == nil:
		return []string{task}, nil
	case errors.Is(err, os.ErrExist):
		return nil, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	run := filepath.Dir(task)
	if err := os.MkdirAll(run, 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(task, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	return []string{task, run}, nil
}
