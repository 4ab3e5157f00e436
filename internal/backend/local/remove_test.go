package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The supervisor removes a run's directory, a directory a task closed to
// writes included, refuses while an attempt of the run runs, and leaves
// other runs alone.
func TestRemoveRunRemovesOnlyThatRunsDirectory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	done := h.launch(t, "gone-1/a/1", "/bin/sh", "-c", "mkdir -p $KILN_OUTPUTS/locked && touch $KILN_OUTPUTS/locked/f && chmod 500 $KILN_OUTPUTS/locked")
	if st := h.waitExit(t, done); st.ExitCode != 0 {
		t.Fatalf("task exited %d", st.ExitCode)
	}
	h.launch(t, "kept-1/a/1", "/bin/true")
	running := h.launch(t, "busy-1/a/1", "/bin/sleep", "30")
	if err := h.b.RemoveRun(t.Context(), "gone-1"); err != nil {
		t.Fatalf("RemoveRun: %v", err)
	}
	if _, err := os.Stat(RunDir(h.home, "gone-1")); !os.IsNotExist(err) {
		t.Errorf("the run's directory is still there: %v", err)
	}
	if _, err := os.Stat(RunDir(h.home, "kept-1")); err != nil {
		t.Errorf("another run's directory is gone: %v", err)
	}
	if err := h.b.RemoveRun(t.Context(), "gone-1"); err != nil {
		t.Errorf("removing it again = %v, want nil", err)
	}
	err := h.b.RemoveRun(t.Context(), "busy-1")
	if err == nil || !strings.Contains(err.Error(), "still runs") {
		t.Errorf("RemoveRun(running) = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(RunDir(h.home, "busy-1"), "a", "1")); err != nil {
		t.Errorf("a running run's directory is gone: %v", err)
	}
	_ = h.b.Abort(t.Context(), running.ID, 0)
	for _, bad := range []string{"..", "a/b", "", "../x"} {
		if err := h.b.RemoveRun(t.Context(), bad); err == nil {
			t.Errorf("RemoveRun(%q) = nil, want a refusal", bad)
		}
	}
}
