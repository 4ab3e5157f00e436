package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// fullDiskWorkflow fills the disk its home is on from its first task, so
// that the engine cannot record that task's end, then runs two more.
func fullDiskWorkflow(t *testing.T, disk string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "full.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: full}
spec:
  tasks:
  - name: fill
    command: [sh, -c, "dd if=/dev/zero of=`+filepath.Join(disk, "filler")+` bs=64k 2>/dev/null; exit 0"]
  - name: after
    dependsOn: [fill]
    command: [sh, -c, "for i in $(seq 1 50); do echo line $i; done"]
  - {name: last, dependsOn: [after], command: [echo, done]}
`)
}

// TestAFullDiskIsSurvived fills the disk under KILN_HOME while a run is
// under way: the engine says so with KLN-5004, backs off, and once space
// is freed finishes the run with true records and an event that says
// when the store could not be written.
func TestAFullDiskIsSurvived(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "8m")
	home := filepath.Join(disk, "home")
	cmd, stderr := startWatched(t, home, "run", fullDiskWorkflow(t, disk))
	waitFor(t, "the engine to report the full disk", func() bool { return strings.Contains(stderr.String(), "KLN-5004") })
	if !strings.Contains(stderr.String(), "bytes free") || !strings.Contains(stderr.String(), filepath.Join(home, "kiln.db")) {
		t.Errorf("the full-disk error does not name the store and its free space:\n%s", stderr.String())
	}
	waitFor(t, "the engine to try again", func() bool { return strings.Count(stderr.String(), "reconcile failed") >= 3 })
	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(cmd, time.Minute); err != nil {
		t.Fatalf("kiln run after space was freed: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "reconcile failed"); n > 40 {
		t.Errorf("the engine tried %d rounds in a few seconds: it does not back off", n)
	}
	run := runs(t, home)[0]
	got := describe(t, home, run.ID)
	if got.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run ended %s: %s", got.Status.Phase, got.Status.Message)
	}
	for _, n := range got.Status.Nodes {
		if n.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 1 {
			t.Errorf("task %s: %s with %d attempts, want Succeeded with one", n.Name, n.Phase, len(n.Attempts))
		}
	}
	events := kiln(t, home, "describe", "run", string(run.ID))
	if !strings.Contains(events.stdout, "KLN-5004 the store could not be written from") {
		t.Errorf("the run's events do not say the store could not be written:\n%s", events.stdout)
	}
}

// TestSIGTERMOnAFullDisk stops kiln run while its disk is full: it leaves
// at once, saying it could not record the cancel, and kiln resume
// finishes the run once space is freed.
func TestSIGTERMOnAFullDisk(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "8m")
	home := filepath.Join(disk, "home")
	cmd, stderr := startWatched(t, home, "run", fullDiskWorkflow(t, disk))
	waitFor(t, "the engine to report the full disk", func() bool { return strings.Contains(stderr.String(), "KLN-5004") })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(cmd, 20*time.Second); err == nil || !strings.Contains(stderr.String(), "leaving without cancelling") {
		t.Fatalf("kiln run after SIGTERM on a full disk: %v\n%s", err, stderr.String())
	}
	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "resume", string(id)); r.code != 0 {
		t.Fatalf("kiln resume: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if got := describe(t, home, id); got.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run ended %s after resume: %s", got.Status.Phase, got.Status.Message)
	}
}

// smallDisk mounts a tmpfs of size on a fresh directory, or skips the test
// where the machine does not allow it.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		stopSupervisor(filepath.Join(dir, "home"))
		_ = exec.Command("umount", "-l", dir).Run()
	})
	return dir
}

// startWatched starts kiln on home, its standard error kept as it comes.
func startWatched(t *testing.T, home string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(kilnBin, append([]string{"--home", home}, args...)...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, stderr
}

// waitExit waits up to d for cmd to exit and returns how it did.
func waitExit(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		return <-done
	}
}

// lockedBuffer is a buffer written by a process and read by a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
