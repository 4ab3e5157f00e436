package slurm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/slurmtest"
)

// wait is the bound of every wait here; each waits on a state, not a time.
const wait = 2 * time.Minute

// waitFor polls cond until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitState polls Observe until the attempt is in state.
func waitState(t *testing.T, b *Backend, spec *job.Spec, state job.State) job.Status {
	t.Helper()
	var st job.Status
	waitFor(t, "attempt "+spec.ID.String()+" reaches its state", func() bool {
		var err error
		st, err = b.Observe(t.Context(), spec)
		return err == nil && st.State == state
	})
	return st
}

// shell is a spec of one process that runs script with sh.
func shell(node, script string) *job.Spec {
	return &job.Spec{
		ID:        job.AttemptID{Run: "slurm-aaaaa", Node: node, Number: 1},
		Processes: []job.Process{{Command: []string{"sh", "-c", script}, Env: os.Environ()}},
	}
}

func launch(t *testing.T, b *Backend, spec *job.Spec) {
	t.Helper()
	if err := b.Launch(t.Context(), spec); err != nil {
		t.Fatalf("Launch(%s): %v", spec.ID, err)
	}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func TestAbortSignalsTheRunningProcessesPolitelyFirst(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	b := newBackend(t, c)
	mark := filepath.Join(c.Dir, "marks")
	if err := os.Mkdir(mark, 0o755); err != nil {
		t.Fatal(err)
	}
	s := shell("abort", "trap 'echo > "+mark+"/term; exit 0' TERM; echo > "+mark+"/started; sleep 300 & wait")
	launch(t, b, s)
	waitFor(t, "the process started", func() bool { return exists(mark + "/started") })
	if err := b.Abort(t.Context(), s.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, b, s, job.StateExited)
	if st.Succeeded() && !st.Stopped {
		t.Errorf("an aborted attempt = %+v, want it stopped", st)
	}
	if !exists(mark + "/term") {
		t.Error("the process never got SIGTERM before the job ended")
	}
	// The job ends after its script recorded the end (it completes first).
	var jobs []slurmJob
	waitFor(t, "the attempt's one job ends", func() bool {
		var err error
		jobs, err = b.jobsOf(t.Context(), s.ID)
		return err == nil && len(jobs) > 0 && jobs[0].final()
	})
	if len(jobs) != 1 {
		t.Errorf("the attempt's jobs after the abort = %+v; want one", jobs)
	}
}

func TestPendingJobShowsSlurmsReasonAndCancels(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	b, err := New(t.Context(), Config{Dir: c.Dir, Conf: c.Conf, Prefix: c.Prefix, SbatchArgs: []string{"--begin=now+3600", slurmtest.Exclude}})
	if err != nil {
		t.Fatal(err)
	}
	s := shell("later", "true")
	launch(t, b, s)
	st := waitState(t, b, s, job.StateRunning)
	if st.Queue == nil || st.Queue.Reason != "BeginTime" {
		t.Fatalf("a job held until later = %+v, want it waiting with Slurm's reason BeginTime", st)
	}
	if err := b.Abort(t.Context(), s.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, b, s, job.StateExited); st.Succeeded() || !st.Stopped {
		t.Errorf("a pending job cancelled = %+v, want it stopped", st)
	}
	launch(t, b, s)
	if jobs, err := b.jobsOf(t.Context(), s.ID); err != nil || len(jobs) != 1 {
		t.Errorf("a launch after the abort made jobs %+v (%v); want none new", jobs, err)
	}
}

func TestSbatchRefusalIsPermanent(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	b := newBackend(t, c)
	s := shell("huge", "true")
	s.Container.MilliCPU = 1 << 20 // far more CPUs than any node has
	var refused *job.RefusedError
	if err := b.Launch(t.Context(), s); !errors.As(err, &refused) || refused.Code != string(apiv1.CodeSlurmRefused) {
		t.Fatalf("Launch of a job no node can hold = %v, want a refusal %s", err, apiv1.CodeSlurmRefused)
	}
}

func TestRestartedBackendWatchesTheJobItAdopted(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	first := newBackend(t, c)
	gate := filepath.Join(c.Dir, "go")
	ledger := filepath.Join(c.Dir, "ledger")
	s := shell("watched", "echo x >> "+ledger+"; while [ ! -e "+gate+" ]; do sleep 0.05; done; echo 42 > $KILN_OUTPUTS/answer")
	s.Outputs = []string{"answer"}
	launch(t, first, s)
	waitFor(t, "the process started", func() bool { return exists(ledger) })
	first.Close() // kiln is killed: its jobs run on

	second := newBackend(t, c)
	ended := make(chan job.Status, 10)
	resynced := make(chan struct{}, 10)
	go second.Watch(t.Context(), func(id job.AttemptID, st job.Status) {
		if id == s.ID && st.State != job.StateRunning {
			ended <- st
		}
	}, func() { resynced <- struct{}{} })
	<-resynced
	launch(t, second, s) // the restarted engine launches it again
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-ended:
		if st.State != job.StateExited || st.ExitCode != 0 {
			t.Errorf("Watch reported %+v, want a success", st)
		}
	case <-time.After(wait):
		t.Fatal("Watch never reported the adopted attempt's end")
	}
	if st := waitState(t, second, s, job.StateExited); !st.Succeeded() || st.Outputs["answer"] != "42" {
		t.Errorf("Observe = %+v, want success with answer=42", st)
	}
	if data, _ := os.ReadFile(ledger); strings.Count(string(data), "x") != 1 {
		t.Errorf("the process started %d times, want once", strings.Count(string(data), "x"))
	}
}

// TestNodeFailureIsASystemFailure takes the test cluster's FailingNode
// down under a job; every other test's jobs keep off that node.
func TestNodeFailureIsASystemFailure(t *testing.T) {
	c := slurmtest.Connect(t)
	const node = slurmtest.FailingNode
	b, err := New(t.Context(), Config{Dir: c.Dir, Conf: c.Conf, Prefix: c.Prefix, SbatchArgs: []string{"--nodelist=" + node}})
	if err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(c.Dir, "started")
	s := shell("failed-node", "echo > "+started+"; exec sleep 300")
	launch(t, b, s)
	waitFor(t, "the process started", func() bool { return exists(started) })
	t.Cleanup(func() { _, _ = c.Command("scontrol", "update", "nodename="+node, "state=resume") })
	if out, err := c.Command("scontrol", "update", "nodename="+node, "state=down", "reason=kiln-test"); err != nil {
		t.Fatalf("taking %s down: %v %s", node, err, out)
	}
	st := waitState(t, b, s, job.StateExited)
	if !st.System || st.Code != string(apiv1.CodeSlurmNodeFailure) || st.Succeeded() {
		t.Errorf("an attempt whose node failed = %+v, want a system failure %s", st, apiv1.CodeSlurmNodeFailure)
	}
}

func TestMissingCommandAndSignalsAreReported(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	b := newBackend(t, c)
	missing := &job.Spec{
		ID:        job.AttemptID{Run: "slurm-aaaaa", Node: "missing", Number: 1},
		Processes: []job.Process{{Command: []string{"no-such-command-kiln"}, Env: os.Environ()}},
	}
	killed := shell("killed", "kill -9 $$")
	launch(t, b, missing)
	launch(t, b, killed)
	if st := waitState(t, b, missing, job.StateExited); !st.NotFound || st.StartError == "" || st.Succeeded() {
		t.Errorf("a command not there = %+v, want NotFound with a start error", st)
	}
	if st := waitState(t, b, killed, job.StateExited); st.ExitCode != -1 || st.Signal != "SIGKILL" {
		t.Errorf("a process killed by SIGKILL = %+v, want exit -1 by SIGKILL", st)
	}
}

func TestFilesOfARunningAttemptAndRemovingItsRun(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	b := newBackend(t, c)
	gate := filepath.Join(c.Dir, "go")
	s := shell("progress", `printf '{"step": 7}' > "$KILN_OUTPUTS/p.tmp"; mv "$KILN_OUTPUTS/p.tmp" "$KILN_OUTPUTS/progress.json"; for i in 1 2 3; do echo "line $i"; done; `+
		"while [ ! -e "+gate+" ]; do sleep 0.05; done")
	if _, err := b.ReadFile(t.Context(), s.ID, "progress.json", 100); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile before launch = %v, want not-exist", err)
	}
	launch(t, b, s)
	var data []byte
	waitFor(t, "the progress file is written", func() bool {
		var err error
		data, err = b.ReadFile(t.Context(), s.ID, "progress.json", 100)
		return err == nil
	})
	if string(data) != `{"step": 7}` {
		t.Errorf("ReadFile = %q", data)
	}
	if _, err := b.ReadFile(t.Context(), s.ID, "progress.json", 3); err == nil {
		t.Error("ReadFile of a file over its limit succeeded")
	}
	if _, err := b.ReadFile(t.Context(), s.ID, "../spec.json", 1<<20); err == nil {
		t.Error("ReadFile read a file outside the output directory")
	}
	if err := b.RemoveRun(t.Context(), s.ID.Run); err == nil || !exists(b.attemptDir(s.ID)) {
		t.Errorf("RemoveRun of a run still running = %v, want a refusal that keeps its files", err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, s, job.StateExited)
	var tail strings.Builder
	if err := b.Logs(t.Context(), s.ID, backend.LogOptions{Tail: 2}, &tail); err != nil || tail.String() != "line 2\nline 3\n" {
		t.Errorf("the last two lines = %q, %v", tail.String(), err)
	}
	waitFor(t, "the run's job ends", func() bool {
		jobs, err := b.jobsOf(t.Context(), s.ID)
		return err == nil && len(jobs) == 1 && jobs[0].final()
	})
	if err := b.RemoveRun(t.Context(), s.ID.Run); err != nil || exists(b.runDir(s.ID.Run)) {
		t.Errorf("RemoveRun of an ended run = %v, want its directory gone", err)
	}
	if err := b.RemoveRun(t.Context(), s.ID.Run); err != nil {
		t.Errorf("RemoveRun again = %v, want nothing to do", err)
	}
}
