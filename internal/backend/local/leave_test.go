package local

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"kiln.dev/kiln/internal/job"
)

// TestCleanNoneLeavesTheRestOfTheGangRunning: the failure is recorded at
// once, the rank still running goes on and its log is kept, and the
// node's next attempt stops it before it starts.
func TestCleanNoneLeavesTheRestOfTheGangRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gang := func(id string) *job.Spec {
		return &job.Spec{ID: mustID(t, id), Clean: job.CleanNone, Processes: []job.Process{
			{Name: "node-0", Command: []string{"sh", "-c", "exit 3"}, Env: os.Environ()},
			{Name: "node-1", Command: []string{"sh", "-c", "echo up; sleep 30; echo survived"}, Env: os.Environ(), Host: 1},
		}}
	}
	first := gang("r-leave/train/1")
	if err := h.b.Launch(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	st := h.waitExit(t, first)
	if st.ExitCode != 3 || st.Failed != "node-0" || st.Processes["node-1"] != -1 || slices.Contains(st.StoppedProcesses, "node-1") {
		t.Fatalf("status %+v, want exit 3 from node-0 with node-1 left running, not stopped", st)
	}
	log := filepath.Join(AttemptDir(h.home, first.ID), "node-1.stdout")
	waitUntil(t, "the left rank to write its log", func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), "up") })

	second := gang("r-leave/train/2")
	second.Processes[0].Command = []string{"true"}
	second.Processes[1].Command = []string{"true"}
	if err := h.b.Launch(t.Context(), second); err != nil {
		t.Fatal(err)
	}
	h.waitExit(t, second)
	pids, err := AttemptPIDs(h.home, first.ID.String())
	if err != nil || len(pids) != 2 {
		t.Fatalf("launch record %v (%v)", pids, err)
	}
	waitUntil(t, "the restart to stop the rank its last attempt left", func() bool {
		return syscall.Kill(pids[1], 0) != nil
	})
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "survived") {
		t.Errorf("the left rank ran to its end beside the restart: %q", b)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); <-time.After(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
