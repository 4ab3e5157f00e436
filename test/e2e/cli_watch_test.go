package e2e

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// gatedWorkflow writes a workflow whose one task waits for the file
// dir/go, then exits with code.
func gatedWorkflow(t *testing.T, dir, name, code string) string {
	t.Helper()
	return writeFile(t, dir, name+".yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: "+name+
		"}\nspec:\n  tasks:\n  - name: main\n    command: [/bin/sh, -c, 'while [ ! -e "+filepath.Join(dir, "go")+" ]; do sleep 0.05; done; exit "+code+"']\n")
}

// kiln watch RUN re-attaches to a run a server works: through a pipe one
// line per event, from the run's start, and at its end the summary kiln
// run prints, with kiln run's exit status: 1 for a run that failed.
func TestWatchFollowsARunToItsEnd(t *testing.T) {
	t.Parallel()
	m := cliModes(t)[1]
	dir := t.TempDir()
	r := m.kiln(t, "submit", gatedWorkflow(t, dir, "watched", "3"))
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || id == "" {
		t.Fatalf("submit: %d %q", r.code, r.stderr)
	}
	cmd := exec.Command(kilnBin, "--home", m.home, "watch", id)
	cmd.Env = m.env
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "kiln watch to show the task running", func() bool { return strings.Contains(stdout.String(), " "+id+" main Running") })
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("kiln watch of a failed run: %v; want exit 1", err)
	}
	if !strings.Contains(stdout.String(), " "+id+" main Failed") || !strings.Contains(stderr.String(), "Run "+id+" Failed after ") ||
		!strings.Contains(stderr.String(), "task main failed") {
		t.Errorf("kiln watch printed %q and %q; want the failure's event and kiln run's summary", stdout.String(), stderr.String())
	}
	// A run that has ended: its events and summary at once, same status.
	if again := m.kiln(t, "watch", id); again.code != 1 || !strings.Contains(again.stderr, "Run "+id+" Failed") {
		t.Errorf("kiln watch of an ended run: exit %d, %q", again.code, again.stderr)
	}
	if none := m.kiln(t, "watch", "no-such-run"); none.code != 1 || !strings.Contains(none.stderr, "KLN-4001") {
		t.Errorf("kiln watch of no run: exit %d, %q; want KLN-4001", none.code, none.stderr)
	}
}

// On a terminal, kiln watch draws the live table kiln run draws, for a
// run a kiln run on this machine works, and exits 0 when it succeeds.
func TestWatchDrawsTheLiveTableOfAnEmbeddedRun(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	runner := startKiln(t, home, "run", "-q", gatedWorkflow(t, dir, "attached", "0"))
	var id string
	waitFor(t, "the run to start", func() bool {
		r := kiln(t, home, "get", "runs", "-o", "name")
		id = strings.TrimSpace(r.stdout)
		return id != ""
	})
	cmd := exec.Command(kilnBin, "--home", home, "watch", id)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out lockedBuffer
	copied := make(chan error, 1)
	go func() { _, err := io.Copy(&out, tty); copied <- err }()
	waitFor(t, "the table to show the task running", func() bool { return strings.Contains(out.String(), "Running") })
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-copied; err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("kiln watch of a run that succeeded: %v\n%q", err, out.String())
	}
	if err := runner.Wait(); err != nil {
		t.Errorf("kiln run: %v", err)
	}
	if !strings.Contains(out.String(), "\x1b[J") || !strings.Contains(out.String(), "Run "+id+" Succeeded") {
		t.Errorf("kiln watch on a terminal wrote %q; want the live table and the summary", out.String())
	}
}
