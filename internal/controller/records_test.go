package controller

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// A retry without backoff starts in the round that records the failure:
// the failed attempt must still be saved as it ended.
func TestFailedAttemptKeepsItsRecordWhenItsRetryStartsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	counter := filepath.Join(t.TempDir(), "count")
	id := e.submit(t, `spec:
  tasks:
  - name: flaky
    command: [sh, -c, 'echo x >> `+counter+`; test $(wc -l < `+counter+`) -ge 3 || exit 4']
    retries: {limit: 3}
  - name: gang
    retries: {limit: 2}
    train:
      runtime: plain
      numNodes: 2
      command: [sh, -c, 'test "$KILN_ATTEMPT" -ge 2 || { [ "$0" = x ] && exit 6; sleep 300; }', x]
      resourcesPerNode: {cpu: 1}
`, nil)
	run := e.wait(t, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
	}
	for name, want := range map[string]struct{ failed, exit int }{"flaky": {2, 4}, "gang": {1, 6}} {
		n := nodeOf(run, name)
		if len(n.Attempts) != want.failed+1 {
			t.Fatalf("%s has %d attempts, want %d", name, len(n.Attempts), want.failed+1)
		}
		for _, a := range n.Attempts[:want.failed] {
			if a.Phase != apiv1.PhaseFailed || a.ExitCode == nil || *a.ExitCode != want.exit || a.FinishedAt == nil ||
				a.Code != apiv1.CodeExit || !strings.Contains(a.Message, "exited with code") {
				t.Errorf("%s attempt %d = %+v, want Failed with exit %d, an end and an error", name, a.Number, a, want.exit)
			}
		}
		if last := n.Attempts[want.failed]; last.Phase != apiv1.PhaseSucceeded {
			t.Errorf("%s's last attempt is %s, want Succeeded", name, last.Phase)
		}
	}
}

// An engine that resumes a run counts the retries spent from the
// attempts as they were recorded.
func TestResumedRunCountsRetriesFromTheRecord(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	id := e.submit(t, `spec:
  tasks:
  - name: flaky
    retries: {limit: 2}
    command: [sh, -c, 'echo x >> `+dir+`/count; test "$KILN_ATTEMPT" -ge 3 || exit 1; while [ ! -e `+gate+` ]; do sleep 0.02; done; exit 1']
`, nil)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if b, _ := os.ReadFile(filepath.Join(dir, "count")); strings.Count(string(b), "x") == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the third attempt never started")
		}
		<-time.After(10 * time.Millisecond)
	}
	e.stop()
	other := e.sibling(t, 2, "resumer")
	if _, err := other.Claim(t.Context(), []apiv1.RunID{id}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	flaky := nodeOf(other.wait(t, id), "flaky")
	if flaky.Phase != apiv1.PhaseFailed || len(flaky.Attempts) != 3 {
		t.Errorf("flaky = %s with %d attempts; want Failed after 3: two retries were already spent", flaky.Phase, len(flaky.Attempts))
	}
}

// A cancel whose engine went away before the attempt ended (a second
// Ctrl-C, a kill -9) ends as a cancel once another engine resumes it.
func TestInterruptedCancelEndsCancelledOnResume(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	started := filepath.Join(t.TempDir(), "started")
	id := e.submit(t, `spec:
  tasks:
  - name: slow-to-stop
    retries: {limit: 3}
    command: [sh, -c, 'trap "sleep 0.5; exit 143" TERM; touch `+started+`; sleep 300 & wait']
  - {name: never, dependsOn: [slow-to-stop], command: ["true"]}
`, nil)
	waitFile(t, started)
	if err := e.Cancel(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		run, err := e.store.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status.Phase == apiv1.PhaseCancelling {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached Cancelling (it is %s)", run.Status.Phase)
		}
		<-time.After(5 * time.Millisecond)
	}
	e.stop() // the engine goes away mid-cancel
	other := e.sibling(t, 1, "resumer")
	if _, err := other.Claim(t.Context(), []apiv1.RunID{id}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	run := other.wait(t, id)
	n := nodeOf(run, "slow-to-stop")
	if run.Status.Phase != apiv1.PhaseCancelled || n.Phase != apiv1.PhaseCancelled || len(n.Attempts) != 1 ||
		n.Attempts[0].Phase != apiv1.PhaseCancelled {
		t.Errorf("run %s, node %s with attempts %+v; want the run, the node and its one attempt Cancelled", run.Status.Phase, n.Phase, n.Attempts)
	}
}

func TestMissingArtifactFailsTheTaskThatDeclaredIt(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	id := e.submit(t, `spec:
  tasks:
  - name: producer
    retries: {limit: 2}
    command: [sh, -c, 'echo no model']
    outputs: {artifacts: [{name: model, path: model/weights.bin}]}
  - {name: consumer, dependsOn: [producer], command: [cat, '{{tasks.producer.outputs.artifacts.model}}']}
`, nil)
	run := e.wait(t, id)
	p := nodeOf(run, "producer")
	if p.Phase != apiv1.PhaseFailed || p.Code != apiv1.CodeOutput || !strings.Contains(p.Message, `"model/weights.bin"`) || len(p.Attempts) != 1 {
		t.Errorf("producer = %s %s %q with %d attempts; want Failed %s naming the artifact, not retried",
			p.Phase, p.Code, p.Message, len(p.Attempts), apiv1.CodeOutput)
	}
	if c := nodeOf(run, "consumer"); c.Phase != apiv1.PhaseSkipped {
		t.Errorf("consumer = %s, want Skipped", c.Phase)
	}
}

// A process killed by SIGKILL that kiln did not send was killed by the
// machine: the task survives it without retries of its own.
func TestProcessKilledFromOutsideIsASystemFailure(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	marker := filepath.Join(t.TempDir(), "killed-once")
	id := e.submit(t, `spec:
  tasks:
  - {name: victim, command: [sh, -c, 'test -e `+marker+` && exit 0; touch `+marker+`; kill -9 $$']}
`, nil)
	run := e.wait(t, id)
	v := nodeOf(run, "victim")
	if run.Status.Phase != apiv1.PhaseSucceeded || len(v.Attempts) != 2 {
		t.Fatalf("run %s, victim has %d attempts; want Succeeded on a second attempt", run.Status.Phase, len(v.Attempts))
	}
	if a := v.Attempts[0]; !a.System || a.Phase != apiv1.PhaseFailed || !strings.Contains(a.Message, "SIGKILL, not by kiln") ||
		a.Signal != "SIGKILL" || a.ExitCode != nil {
		t.Errorf("first attempt = %+v, want a system failure by signal SIGKILL, with no exit code", a)
	}
}

// A task without retries survives one crash of the supervisor.
func TestLostSupervisorIsRetriedFromTheSystemBudget(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	dir := t.TempDir()
	id := e.submit(t, `spec:
  tasks:
  - {name: task, command: [sh, -c, 'test "$KILN_ATTEMPT" -ge 2 && exit 0; touch `+dir+`/started; exec sleep 300']}
`, nil)
	waitFile(t, filepath.Join(dir, "started"))
	info, err := e.backend.Supervisor(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	run := e.wait(t, id)
	n := nodeOf(run, "task")
	if run.Status.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 2 {
		t.Fatalf("run %s with %d attempts (%s); want Succeeded on a second attempt", run.Status.Phase, len(n.Attempts), n.Message)
	}
	if a := n.Attempts[0]; !a.System || a.Code != apiv1.CodeAttemptLost {
		t.Errorf("first attempt = %+v, want a system failure %s", a, apiv1.CodeAttemptLost)
	}
	events, err := e.store.ListEvents(t.Context(), store.ListEventsParams{Run: id})
	if err != nil {
		t.Fatal(err)
	}
	said := false
	for _, ev := range events {
		said = said || strings.Contains(ev.Message, "system retries: 1 of 3 used")
	}
	if !said {
		t.Error("no event says the retry came from the system budget")
	}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		<-time.After(5 * time.Millisecond)
	}
}

// An attempt that cannot be built (its secret is missing) never started:
// its record says so, and a task admitted beside it in the same round is
// skipped, not started after the run began to stop. Their room goes back.
func TestAttemptThatCannotStartStartsNothingBesideIt(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2, func(cfg *Config) { cfg.Secrets = cfg.Store.(Secrets) })
	id := e.submit(t, `spec:
  tasks:
  - name: a
    command: ["true"]
    env: [{name: TOKEN, valueFrom: {secret: missing}}]
  - {name: b, command: ["true"]}
`, nil)
	run := e.wait(t, id)
	a, b := nodeOf(run, "a"), nodeOf(run, "b")
	if run.Status.Phase != apiv1.PhaseFailed || a.Phase != apiv1.PhaseFailed || b.Phase != apiv1.PhaseSkipped || len(b.Attempts) != 0 {
		t.Fatalf("run %s, a %s, b %s with %d attempts; want Failed, Failed, Skipped with none", run.Status.Phase, a.Phase, b.Phase, len(b.Attempts))
	}
	at := a.Attempts[0]
	if at.Code != apiv1.CodeSecret || strings.HasPrefix(at.Message, string(apiv1.CodeSecret)) || !strings.Contains(at.Message, `has no secret "missing"`) ||
		at.StartedAt != nil || a.StartedAt != nil {
		t.Errorf("a's attempt = %+v; want %s once, saying which secret is missing, and no start", at, apiv1.CodeSecret)
	}
	events, err := e.store.ListEvents(t.Context(), store.ListEventsParams{Run: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Phase == apiv1.PhaseRunning && ev.Node != "" {
			t.Errorf("event %q says %s started", ev.Message, ev.Node)
		}
	}
	res, err := e.pool.Admit(t.Context(), nil, []resource.Claim{{Holder: "probe/1", Waiter: "probe", Request: resource.Request{MilliCPU: 2000}}})
	if err != nil || !res[0].Admitted {
		t.Errorf("the whole pool is not free after the run: %+v, %v", res, err)
	}
}
