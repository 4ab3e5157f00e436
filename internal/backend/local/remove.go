package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"kiln.dev/kiln/internal/backend"
)

var _ backend.RunRemover = (*Backend)(nil)

// runName is the run part of an attempt ID: one path element, never "." or "..".
var runName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// RemoveRunArgs names the run whose directory to remove.
type RemoveRunArgs struct{ Run string }

// RemoveRun implements backend.RunRemover: the supervisor removes the
// run's directory, since under isolation by users the files in it belong
// to the project's account and the supervisor knows whether an attempt of
// the run still runs. A supervisor of an older kiln, which outlived an
// upgrade while speaking this build's protocol, has no such method: the engine, which runs as the same user,
// removes the directory itself.
func (b *Backend) RemoveRun(ctx context.Context, run string) error {
	err := b.call(ctx, "Supervisor.RemoveRun", RemoveRunArgs{Run: run}, &Empty{})
	var re remoteError
	if errors.As(err, &re) && strings.HasPrefix(string(re), errNoMethod) && runName.MatchString(run) {
		return removeTree(RunDir(b.cfg.Home, run))
	}
	return err
}

// RunDir is where run's attempts live under home.
func RunDir(home, run string) string { return filepath.Join(home, "runs", run) }

// RemoveRun removes the directory of run a.Run, $KILN_HOME/runs/<run>,
// with its attempts' logs, outputs and files, and forgets the exits of
// its attempts that were not written yet. It refuses while an attempt of
// the run still runs. A directory already gone is not an error.
func (s *Supervisor) RemoveRun(a RemoveRunArgs, _ *Empty) error {
	if !runName.MatchString(a.Run) {
		return fmt.Errorf("run ID %q is not a run's", a.Run)
	}
	prefix := a.Run + "/"
	s.mu.Lock()
	for id := range s.gangs {
		if strings.HasPrefix(id, prefix) {
			s.mu.Unlock()
			return fmt.Errorf("attempt %s of run %s still runs: its directory is kept", id, a.Run)
		}
	}
	for id := range s.unwritten {
		if strings.HasPrefix(id, prefix) {
			delete(s.unwritten, id)
		}
	}
	s.mu.Unlock()
	s.journal.forget(a.Run)
	return removeTree(RunDir(s.home, a.Run))
}

// removeTree removes dir and everything in it. A task may have left a
// directory it cannot be removed from (mode 0500): such directories are
// opened to their owner and the removal tried again.
func removeTree(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
