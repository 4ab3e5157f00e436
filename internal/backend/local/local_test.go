package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"kiln.dev/kiln/internal/job"
)

// TestMain doubles as the supervisor binary: the backend under test starts
// this test binary with KILN_TEST_SUPERVISOR_HOME set.
func TestMain(m *testing.M) {
	RunSandboxIfAsked()
	if home := os.Getenv("KILN_TEST_OLD_SUPERVISOR_HOME"); home != "" {
		serveAsOlderSupervisor(home) // proto_test.go
		os.Exit(0)
	}
	if home := os.Getenv("KILN_TEST_SUPERVISOR_HOME"); home != "" {
		if err := Serve(context.Background(), ServeConfig{Home: home, IdleTimeout: time.Minute}); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// harness is a backend on a fresh home with an exit watcher.
type harness struct {
	b     *Backend
	home  string
	exits chan job.AttemptID
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessIn(t, t.TempDir())
}

// newHarnessIn is newHarness on home.
func newHarnessIn(t *testing.T, home string) *harness {
	t.Helper()
	h := &harness{home: home, exits: make(chan job.AttemptID, 100), b: New(Config{
		Home:              home,
		SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + home, os.Args[0]},
	})}
	ctx, cancel := context.WithCancel(context.Background())
	synced := make(chan struct{}, 10)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		h.b.Watch(ctx, func(id job.AttemptID, _ job.Status) {
			select {
			case h.exits <- id:
			case <-ctx.Done():
			}
		}, func() { synced <- struct{}{} })
	}()
	t.Cleanup(func() {
		cancel()
		h.b.Close()
		<-watched // a watcher still calling could start another supervisor in the home being removed
		killSupervisor(home)
	})
	select {
	case <-synced:
	case <-time.After(10 * time.Second):
		t.Fatal("watcher never connected")
	}
	return h
}

func (h *harness) launch(t *testing.T, id string, cmd ...string) *job.Spec {
	t.Helper()
	spec := &job.Spec{ID: mustID(t, id), Processes: []job.Process{{Command: cmd, Env: os.Environ()}}}
	if err := h.b.Launch(t.Context(), spec); err != nil {
		t.Fatalf("Launch(%s): %v", id, err)
	}
	return spec
}

// waitExit waits for the supervisor to report id's exit and returns its status.
func (h *harness) waitExit(t *testing.T, spec *job.Spec) job.Status {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case id := <-h.exits:
			if id != spec.ID {
				continue
			}
			st, err := h.b.Observe(t.Context(), spec)
			if err != nil {
				t.Fatalf("Observe(%s): %v", spec.ID, err)
			}
			return st
		case <-deadline:
			t.Fatalf("attempt %s did not exit", spec.ID)
		}
	}
}

func TestFailures(t *testing.T) {
	t.Parallel()
	h := newHarness(t)

	st := h.waitExit(t, h.launch(t, "r/missing/1", "no-such-command-kiln"))
	if !st.NotFound || st.ExitCode != -1 || !strings.Contains(st.StartError, "no-such-command-kiln") {
		t.Errorf("missing command: status = %+v, want NotFound naming the command", st)
	}
	st = h.waitExit(t, h.launch(t, "r/exit/1", "sh", "-c", "exit 3"))
	if st.ExitCode != 3 || st.Succeeded() {
		t.Errorf("exit 3: status = %+v", st)
	}
	spec := h.launch(t, "r/output/1", "true")
	spec.Outputs = []string{"never"}
	if st = h.waitExit(t, spec); st.Succeeded() || !strings.Contains(st.OutputError, "never") {
		t.Errorf("missing output: status = %+v, want an output error", st)
	}
}

func TestAbortEscalatesToKill(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ready := filepath.Join(t.TempDir(), "ready")
	// The shell ignores SIGTERM and its child sleeps; only SIGKILL to the
	// group ends both.
	spec := h.launch(t, "r/stubborn/1", "sh", "-c", "trap '' TERM; touch "+ready+"; sleep 300 & wait; sleep 300")
	waitFile(t, ready)
	if err := h.b.Abort(t.Context(), spec.ID, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	st := h.waitExit(t, spec)
	if st.Signal != "SIGKILL" || !st.Stopped || st.System {
		t.Fatalf("status = %+v, want killed by SIGKILL after the grace period, stopped by kiln", st)
	}
}

func TestAttemptOfADeadSupervisorIsLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ready := filepath.Join(t.TempDir(), "ready")
	spec := h.launch(t, "r/orphan/1", "sh", "-c", "touch "+ready+"; exec sleep 300")
	waitFile(t, ready)
	info, err := h.b.Supervisor(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readRecords(h.home, spec.ID.String())
	if err != nil || recs.launch == nil {
		t.Fatalf("launch record %+v (%v)", recs, err)
	}
	launch := recs.launch
	if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var st job.Status
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if st, err = h.b.Observe(t.Context(), spec); err == nil && st.State == job.StateLost {
			break
		}
	}
	if st.State != job.StateLost {
		t.Fatalf("state = %v, err %v; want lost after the supervisor died", st.State, err)
	}
	for deadline := time.Now().Add(10 * time.Second); startTicks(launch.PIDs[0]) == launch.StartTicks[0]; {
		if time.Now().After(deadline) {
			t.Fatalf("the lost attempt's process %d still runs", launch.PIDs[0])
		}
		runtimeGosched()
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; runtimeGosched() {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
	}
}

func TestLeaderDecidesAndFilesAreWritten(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := os.Environ()
	spec := &job.Spec{
		ID: mustID(t, "r/mpi/1"), Leader: "launcher", Files: map[string]string{"hostfile": "localhost slots=2\n"},
		Processes: []job.Process{
			{Name: "launcher", Command: []string{"sh", "-c", "grep -q slots=2 ../1/hostfile"}, Env: env},
			{Name: "helper", Command: []string{"sleep", "300"}, Env: env},
		},
	}
	if err := h.b.Launch(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	if st := h.waitExit(t, spec); !st.Succeeded() {
		t.Errorf("status = %+v, want success decided by the launcher alone", st)
	}
}

func TestNetworkIsStablePerAttempt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, err := h.b.Network(t.Context(), mustID(t, "r/net/1"), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := h.b.Network(t.Context(), mustID(t, "r/net/1"), 2, 3)
	other, _ := h.b.Network(t.Context(), mustID(t, "r/net/2"), 2, 3)
	if len(a.Ports) != 3 || len(a.Hosts) != 2 || fmt.Sprint(a) != fmt.Sprint(again) {
		t.Errorf("Network = %v then %v, want the same 2 hosts and 3 ports", a, again)
	}
	for _, p := range other.Ports {
		if slices.Contains(a.Ports, p) {
			t.Errorf("two attempts share port %d", p)
		}
	}
}

func mustID(t *testing.T, s string) job.AttemptID {
	t.Helper()
	id, err := job.ParseAttemptID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
