package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// hasEvent reports whether run id on home has an event of reason.
func hasEvent(t *testing.T, home string, id apiv1.RunID, reason string) bool {
	t.Helper()
	return slices.ContainsFunc(eventsOf(t, home, nil, id), func(e apiv1.Event) bool { return e.Reason == reason })
}

// TestSuspendARunOfPlainTasks: kiln suspend of a workflow of plain tasks
// lets the running task finish and starts nothing after it until kiln
// unsuspend, as argo suspend does; each request is an event.
func TestSuspendARunOfPlainTasks(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, gate := filepath.Join(dir, "ledger"), filepath.Join(dir, "gate")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: chain}
spec:
  tasks:
  - name: first
    command: [sh, -c, 'echo first >> `+ledger+`; until test -e `+gate+`; do sleep 0.05; done']
  - name: second
    dependsOn: [first]
    command: [sh, -c, 'echo second >> `+ledger+`']
`)
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "first to start", func() bool { return fileHasLine(ledger) })
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "suspend", string(id)); r.code != 0 {
		t.Fatalf("kiln suspend: %d %s", r.code, r.stderr)
	}
	waitFor(t, "the engine to take the request", func() bool { return hasEvent(t, home, id, "SuspendStarted") })
	writeFile(t, dir, "gate", "")
	waitFor(t, "the run to show Suspended", func() bool { return describe(t, home, id).Status.Phase == apiv1.PhaseSuspended })
	run := describe(t, home, id)
	if first, second := nodeNamed(t, run, "first").Phase, nodeNamed(t, run, "second").Phase; first != apiv1.PhaseSucceeded || second != apiv1.PhaseSuspended {
		t.Fatalf("while suspended: first %s, second %s; want the running task finished and the next one Suspended", first, second)
	}
	if got := readOrEmpty(ledger); got != "first\n" {
		t.Fatalf("while suspended the ledger is %q: a task started", got)
	}
	if r := kiln(t, home, "unsuspend", string(id)); r.code != 0 {
		t.Fatalf("kiln unsuspend: %d %s", r.code, r.stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run's kiln exited with %v", err)
	}
	run = describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseSucceeded || readOrEmpty(ledger) != "first\nsecond\n" || !hasEvent(t, home, id, "UnsuspendRequested") {
		t.Errorf("after unsuspend: run %s, ledger %q, UnsuspendRequested %v; want Succeeded, both tasks once, the event",
			run.Status.Phase, readOrEmpty(ledger), hasEvent(t, home, id, "UnsuspendRequested"))
	}
}

// TestUnsuspendRunsTheExitHandlerOfAFailingRun: a task fails while its
// run is suspended, so the exit handler, ready at once, is parked with
// the rest; kiln unsuspend starts it and the run ends Failed, with the
// handler run once. (Found by the model test: the handler stayed parked
// and the run Failing for ever.)
func TestUnsuspendRunsTheExitHandlerOfAFailingRun(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, gate := filepath.Join(dir, "ledger"), filepath.Join(dir, "gate")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: failing}
spec:
  tasks:
  - name: work
    command: [sh, -c, 'echo work >> `+ledger+`; until test -e `+gate+`; do sleep 0.05; done; exit 3']
  onExit:
  - name: notify
    command: [sh, -c, 'echo notify >> `+ledger+`']
`)
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "work to start", func() bool { return fileHasLine(ledger) })
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "suspend", string(id)); r.code != 0 {
		t.Fatalf("kiln suspend: %d %s", r.code, r.stderr)
	}
	waitFor(t, "the engine to take the request", func() bool { return hasEvent(t, home, id, "SuspendStarted") })
	writeFile(t, dir, "gate", "")
	waitFor(t, "the exit handler to be parked", func() bool {
		run := describe(t, home, id)
		n := run.Status.Node("onExit.notify")
		return n != nil && n.Phase == apiv1.PhaseSuspended
	})
	if got := readOrEmpty(ledger); got != "work\n" {
		t.Fatalf("while suspended the ledger is %q: the exit handler started", got)
	}
	if r := kiln(t, home, "unsuspend", string(id)); r.code != 0 {
		t.Fatalf("kiln unsuspend: %d %s", r.code, r.stderr)
	}
	waitFor(t, "the run to end", func() bool { return describe(t, home, id).Status.Phase.Done() })
	if err := cmd.Wait(); err == nil {
		t.Fatal("the run's kiln exited 0; want the failed run's exit code")
	}
	run := describe(t, home, id)
	notify := run.Status.Node("onExit.notify")
	if run.Status.Phase != apiv1.PhaseFailed || notify == nil || notify.Phase != apiv1.PhaseSucceeded || readOrEmpty(ledger) != "work\nnotify\n" {
		t.Errorf("after unsuspend: run %s, notify %+v, ledger %q; want Failed, the handler Succeeded, run once", run.Status.Phase, notify, readOrEmpty(ledger))
	}
}

// deadlineJob is a TrainJob of one node running command, with an
// activeDeadlineSeconds of 2, submitted suspended if suspended.
func deadlineJob(t *testing.T, suspended bool, command string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "job.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: deadline}
spec:
  runtimeRef: {name: plain}
  suspend: %v
  runPolicy: {activeDeadlineSeconds: 2}
  trainer:
    numNodes: 1
    resourcesPerNode: {cpu: 100m}
    command: [sh, -c, %q]
`, suspended, command))
}

// TestTrainJobDeadlineCountsOnlyTimeNotSuspended: a TrainJob that starts
// suspended (as Kueue submits them) outlives its activeDeadlineSeconds
// while suspended and runs once unsuspended, as Kubernetes Jobs and
// Trainer reset the deadline on resume; one that runs past its deadline
// fails with Trainer's DeadlineExceeded.
func TestTrainJobDeadlineCountsOnlyTimeNotSuspended(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	cmd := startKiln(t, home, "run", "-q", deadlineJob(t, true, "true"))
	waitFor(t, "the job to be suspended", func() bool {
		list := runs(t, home)
		return len(list) == 1 && list[0].Status.Phase == apiv1.PhaseSuspended && list[0].Status.StartedAt != nil
	})
	id := runs(t, home)[0].ID
	started := *describe(t, home, id).Status.StartedAt
	for time.Since(started) < 3*time.Second { // past the deadline of 2 s, suspended
		<-time.After(50 * time.Millisecond)
	}
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSuspended {
		t.Fatalf("suspended past its deadline the job is %s (%s); want still Suspended", run.Status.Phase, run.Status.Message)
	}
	if r := kiln(t, home, "unsuspend", string(id)); r.code != 0 {
		t.Fatalf("kiln unsuspend: %d %s", r.code, r.stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the unsuspended job: %v\n%s", err, kiln(t, home, "describe", "run", string(id)).stdout)
	}
	run := describe(t, home, id)
	if s := run.Status.Suspended; run.Status.Phase != apiv1.PhaseSucceeded || s == nil || s.Since != nil || s.Seconds < 3 {
		t.Errorf("after unsuspend: %s, suspension %+v; want Succeeded, at least 3 s suspended and none now", run.Status.Phase, s)
	}

	late := failedRun(t, home, deadlineJob(t, false, "exec sleep 300"))
	trainer := nodeNamed(t, late, "trainer")
	if late.Status.Code != apiv1.CodeRunTimeout || !slices.ContainsFunc(trainer.Conditions, func(c apiv1.Condition) bool {
		return c.Type == apiv1.ConditionFailed && c.Status == "True" && c.Reason == "DeadlineExceeded"
	}) {
		t.Errorf("a job past its deadline: %s, conditions %+v; want %s and a Failed condition for DeadlineExceeded", late.Status.Code, trainer.Conditions, apiv1.CodeRunTimeout)
	}
	if want := "the run exceeded its runPolicy.activeDeadlineSeconds of 2s"; !strings.Contains(late.Status.Message, want) {
		t.Errorf("a job past its deadline says %q, want it to name the field the user wrote: %q", late.Status.Message, want)
	}
}

// TestAGateTimeoutDoesNotCountTimeSuspended: a gate's timeout is frozen
// while its run is suspended, and an approval sent meanwhile is taken.
func TestAGateTimeoutDoesNotCountTimeSuspended(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: held}
spec:
  tasks:
  - name: ok
    gate: {approve: {}, timeout: 10s}
  - name: after
    dependsOn: [ok]
    command: ["true"]
`)
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "the gate to wait", func() bool {
		list := runs(t, home)
		return len(list) == 1 && nodeNamed(t, describe(t, home, list[0].ID), "ok").Phase == apiv1.PhaseRunning
	})
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "suspend", string(id)); r.code != 0 {
		t.Fatalf("kiln suspend: %d %s", r.code, r.stderr)
	}
	waitFor(t, "the engine to take the suspend", func() bool { return hasEvent(t, home, id, "SuspendStarted") })
	since := *nodeNamed(t, describe(t, home, id), "ok").Gate.WaitingSince
	// The timeout leaves a loaded machine 10 s to take the suspend; the
	// test then waits past it, suspended.
	for time.Since(since) < 11*time.Second {
		<-time.After(50 * time.Millisecond)
	}
	if n := nodeNamed(t, describe(t, home, id), "ok"); n.Phase != apiv1.PhaseRunning {
		t.Fatalf("suspended past its timeout the gate is %s (%s); want still waiting", n.Phase, n.Message)
	}
	if r := kiln(t, home, "approve", string(id), "ok"); r.code != 0 {
		t.Fatalf("kiln approve: %d %s", r.code, r.stderr)
	}
	if r := kiln(t, home, "unsuspend", string(id)); r.code != 0 {
		t.Fatalf("kiln unsuspend: %d %s", r.code, r.stderr)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run: %v\n%s", err, kiln(t, home, "describe", "run", string(id)).stdout)
	}
	if n := nodeNamed(t, describe(t, home, id), "ok"); n.Phase != apiv1.PhaseSucceeded || n.Gate.Decision != "approved" {
		t.Errorf("the gate ended %s (%s); want approved", n.Phase, n.Gate.Decision)
	}
}

// TestARetryOfARunStoppedWhileSuspendedRuns: a run stopped while
// suspended ends unsuspended (its clock stopped, an event saying so),
// and kiln retry runs it instead of bringing it back suspended.
func TestARetryOfARunStoppedWhileSuspendedRuns(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, gate := filepath.Join(dir, "ledger"), filepath.Join(dir, "gate")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: stopped-suspended}
spec:
  tasks:
  - name: w
    command: [sh, -c, 'echo w >> `+ledger+`; until test -e `+gate+`; do sleep 0.05; done']
  - name: after
    dependsOn: [w]
    command: [sh, -c, 'echo after >> `+ledger+`']
`)
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "w to start", func() bool { return fileHasLine(ledger) })
	id := runs(t, home)[0].ID
	for _, verb := range []string{"suspend", "stop"} {
		if r := kiln(t, home, verb, string(id)); r.code != 0 {
			t.Fatalf("kiln %s: %d %s", verb, r.code, r.stderr)
		}
		if verb == "suspend" {
			waitFor(t, "the engine to take the suspend", func() bool { return hasEvent(t, home, id, "SuspendStarted") })
		}
	}
	waitFor(t, "the run to end", func() bool { return describe(t, home, id).Status.Phase.Done() })
	_ = cmd.Wait() // stopped: it failed
	run := describe(t, home, id)
	if s := run.Status.Suspended; run.Status.Phase != apiv1.PhaseFailed || s == nil || s.Since != nil || !hasEvent(t, home, id, "SuspendEnded") {
		t.Fatalf("stopped while suspended: %s, suspension %+v, SuspendEnded %v; want Failed, the clock stopped, the event", run.Status.Phase, s, hasEvent(t, home, id, "SuspendEnded"))
	}
	writeFile(t, dir, "gate", "")
	if r := kilnBounded(t, home, "retry", "-q", string(id)); r.code != 0 {
		t.Fatalf("kiln retry: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded || readOrEmpty(ledger) != "w\nw\nafter\n" {
		t.Errorf("after retry: %s (%s), ledger %q; want Succeeded, w again and after", run.Status.Phase, run.Status.Message, readOrEmpty(ledger))
	}
}
