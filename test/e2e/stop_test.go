package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// stopWorkflow is a run whose first task waits (writing "started" to
// ledger), whose other tasks, one that runs on failure included, follow
// it, and whose exit handler writes the run's status to exits.
func stopWorkflow(ledger, exits string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: stoppable}
spec:
  tasks:
  - name: long
    command: [sh, -c, 'echo started >> ` + ledger + `; exec sleep 300']
  - name: next
    dependsOn: [long]
    command: [sh, -c, 'echo next >> ` + ledger + `']
  - name: report
    dependsOn: [long]
    trigger: allDone
    command: [sh, -c, 'echo report >> ` + ledger + `']
  onExit:
  - name: notify
    command: [sh, -c, 'echo "{{workflow.status}}" >> ` + exits + `']
`
}

// TestStopRunsTheExitHandlersAndCancelDoesNot: kiln stop (argo stop)
// stops the running task, starts nothing else, not even a task that runs
// on failure, but runs the exit handlers, and the run ends Failed with
// KLN-3020; kiln cancel (argo terminate) runs no exit handler.
func TestStopRunsTheExitHandlersAndCancelDoesNot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verb  string
		phase apiv1.Phase
		code  apiv1.Code
		exits string
	}{
		{"stop", apiv1.PhaseFailed, apiv1.CodeStopped, "Failed\n"},
		{"cancel", apiv1.PhaseCancelled, apiv1.CodeCancelled, ""},
	} {
		t.Run(tc.verb, func(t *testing.T) {
			t.Parallel()
			home, dir := newHome(t), t.TempDir()
			ledger, exits := filepath.Join(dir, "ledger"), filepath.Join(dir, "exits")
			cmd := startKiln(t, home, "run", "-q", writeFile(t, dir, "wf.yaml", stopWorkflow(ledger, exits)))
			waitFor(t, "the long task to start", func() bool { return fileHasLine(ledger) })
			id := runs(t, home)[0].ID
			if r := kiln(t, home, tc.verb, string(id)); r.code != 0 || !strings.Contains(r.stdout, tc.verb+" requested") {
				t.Fatalf("kiln %s: %d %s%s", tc.verb, r.code, r.stdout, r.stderr)
			}
			_ = cmd.Wait()
			run := describe(t, home, id)
			if run.Status.Phase != tc.phase || run.Status.Code != tc.code {
				t.Errorf("after kiln %s the run is %s %s, want %s %s", tc.verb, run.Status.Phase, run.Status.Code, tc.phase, tc.code)
			}
			if got := readOrEmpty(ledger); got != "started\n" {
				t.Errorf("after kiln %s the tasks wrote %q; want only the first, nothing started after", tc.verb, got)
			}
			if got := readOrEmpty(exits); got != tc.exits {
				t.Errorf("after kiln %s the exit handler wrote %q, want %q", tc.verb, got, tc.exits)
			}
			if r := kiln(t, home, tc.verb, string(id)); r.code == 0 || !strings.Contains(r.stderr, "KLN-4010") {
				t.Errorf("kiln %s of an ended run: %d %s; want KLN-4010", tc.verb, r.code, r.stderr)
			}
		})
	}
}

// TestAStopAfterTheTasksEndedLeavesTheOutcome: a stop that comes while
// only the exit handler runs (every task ended) has nothing left to stop:
// the handler runs on, and the run ends as its tasks did, which is what
// the handler saw; an event says why. (Found by the model test: the run
// ended Failed after its handler reported Succeeded.)
func TestAStopAfterTheTasksEndedLeavesTheOutcome(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, gate := filepath.Join(dir, "ledger"), filepath.Join(dir, "gate")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: late}
spec:
  tasks:
  - name: work
    command: [sh, -c, 'echo work >> `+ledger+`']
  onExit:
  - name: notify
    command: [sh, -c, 'echo "notify {{workflow.status}}" >> `+ledger+`; until test -e `+gate+`; do sleep 0.05; done']
`)
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "the exit handler to start", func() bool { return strings.Contains(readOrEmpty(ledger), "notify") })
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "stop", string(id)); r.code != 0 {
		t.Fatalf("kiln stop: %d %s", r.code, r.stderr)
	}
	waitFor(t, "the engine to take the stop", func() bool { return hasEvent(t, home, id, "StopAfterTasks") })
	writeFile(t, dir, "gate", "")
	waitFor(t, "the run to end", func() bool { return describe(t, home, id).Status.Phase.Done() })
	if err := cmd.Wait(); err != nil {
		t.Errorf("the run's kiln exited with %v; want 0, the run succeeded", err)
	}
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded || readOrEmpty(ledger) != "work\nnotify Succeeded\n" {
		t.Errorf("run %s (%s), ledger %q; want Succeeded, as the exit handler saw", run.Status.Phase, run.Status.Message, readOrEmpty(ledger))
	}
}

// TestAStoppedRunsExitHandlerGateWaits: a stop runs the exit handler,
// and a gate in it waits for its approval as it would after a failure,
// instead of being cancelled with the run's own gates.
func TestAStoppedRunsExitHandlerGateWaits(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: gated-exit}
spec:
  tasks:
  - name: work
    command: [sh, -c, 'echo work >> `+ledger+`; exec sleep 300']
  onExit:
  - name: ok
    gate: {approve: {message: "notify?"}}
  - name: notify
    dependsOn: [ok]
    command: [sh, -c, 'echo notify >> `+ledger+`']
`)
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "work to start", func() bool { return fileHasLine(ledger) })
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "stop", string(id)); r.code != 0 {
		t.Fatalf("kiln stop: %d %s", r.code, r.stderr)
	}
	waitFor(t, "the exit handler's gate to wait", func() bool {
		run := describe(t, home, id)
		n := run.Status.Node("onExit.ok")
		return n != nil && n.Phase == apiv1.PhaseRunning
	})
	if r := kiln(t, home, "approve", string(id), "onExit.ok"); r.code != 0 {
		t.Fatalf("kiln approve: %d %s", r.code, r.stderr)
	}
	waitFor(t, "the run to end", func() bool { return describe(t, home, id).Status.Phase.Done() })
	_ = cmd.Wait() // the stopped run failed: its exit code says so
	run := describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseFailed || run.Status.Code != apiv1.CodeStopped || readOrEmpty(ledger) != "work\nnotify\n" {
		t.Errorf("run %s %s, ledger %q; want Failed %s with the exit handler run after its approval", run.Status.Phase, run.Status.Code, readOrEmpty(ledger), apiv1.CodeStopped)
	}
}
