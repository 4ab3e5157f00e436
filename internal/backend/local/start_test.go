package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kiln.dev/kiln/internal/job"
)

func TestAnAttemptStoppedBeforeItsStartNeverStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := mustID(t, "r-stop/early/1")
	if err := h.b.Abort(t.Context(), id, time.Second); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	spec := h.launch(t, id.String(), "touch", marker)
	st, err := h.b.Observe(t.Context(), spec)
	if err != nil || st.State != job.StateExited || !strings.Contains(st.StartError, "stopped before it started") {
		t.Fatalf("Observe = %+v, %v; want exited, stopped before it started", st, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the attempt ran after it was stopped")
	}
}

func TestAStartCutShortStartsAgainWithFreshLogs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := mustID(t, "r-cut/task/1")
	dir := AttemptDir(h.home, id)
	// A supervisor made the directory and its process wrote, then died
	// before recording the launch.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stdout", "stdout" + timesSuffix, "stderr"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("from the start cut short\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spec := h.launch(t, id.String(), "sh", "-c", "echo again")
	if st := h.waitExit(t, spec); st.ExitCode != 0 || st.StartError != "" {
		t.Fatalf("the attempt ended %+v, want exit 0", st)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stdout")); err != nil || string(b) != "again\n" {
		t.Errorf("stdout is %q (%v), want the second start's alone", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "stderr")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stderr is %q (%v), want none: the second start wrote none", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stdout"+timesSuffix)); err != nil {
		t.Errorf("stdout's index: %v, want the second start's", err)
	}
}
