package e2e

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// hasEvent reports whether run id on home has an event of reason.
func hasEvent(t *testing.T, home string, id apiv1.RunID, reason string) bool {
	t.Helper()
	r := kiln(t, home, "describe", "run", string(id), "-o", "json")
	var got struct {
		Events []apiv1.Event `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("describe -o json: %v\n%s", err, r.stdout)
	}
	return slices.ContainsFunc(got.Events, func(e apiv1.Event) bool { return e.Reason == reason })
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
	waitFor(t, "the engine to take the request", func() bool { return hasEvent(t, home, id, "SuspendRequested") })
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
