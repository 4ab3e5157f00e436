package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// kilnBounded runs kiln on home as kiln does, but kills it if it has not
// ended within a minute: a retry that waits forever fails the test
// instead of hanging it.
func kilnBounded(t *testing.T, home string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	all := append([]string{"--home", home}, args...)
	cmd := exec.CommandContext(ctx, kilnBin, all...)
	r := runKiln(t, cmd, all)
	if ctx.Err() != nil {
		t.Fatalf("kiln %v did not end within a minute:\n%s%s", args, r.stdout, r.stderr)
	}
	return r
}

// sweepWorkflow is a map of four items, one at a time, each appending
// "item N" to ledger; item 1 fails until fix exists (or, with hang, waits
// for it), and the exit handler appends the run's status to exits.
func sweepWorkflow(ledger, fix, exits string, hang bool) string {
	bad := `test -e ` + fix
	if hang {
		bad = `until test -e ` + fix + `; do sleep 0.05; done`
	}
	return `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: sweep}
spec:
  tasks:
  - name: sweep
    forEach: {range: {count: 4}, maxParallel: 1}
    command: [sh, -c, 'echo "item {{item}}" >> ` + ledger + `; [ "{{item}}" != 1 ] || { ` + bad + `; }']
  - name: after
    dependsOn: [sweep]
    command: ["true"]
  onExit:
  - name: notify
    command: [sh, -c, 'echo "{{workflow.status}}" >> ` + exits + `']
`
}

// TestRetryRunsAMapsSkippedItemsAndTheExitHandlerAgain: a map that
// stopped at its failed item runs that item and the ones it skipped on
// kiln retry, not the one that succeeded, and the exit handler runs again
// and sees the new result.
func TestRetryRunsAMapsSkippedItemsAndTheExitHandlerAgain(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, fix, exits := filepath.Join(dir, "ledger"), filepath.Join(dir, "fix"), filepath.Join(dir, "exits")
	wf := writeFile(t, dir, "wf.yaml", sweepWorkflow(ledger, fix, exits, false))
	if r := kilnBounded(t, home, "run", "-q", wf); r.code != 1 {
		t.Fatalf("first run exited %d, want 1: %s", r.code, r.stderr)
	}
	id := runs(t, home)[0].ID
	run := describe(t, home, id)
	if p := nodeNamed(t, run, "sweep.2").Phase; p != apiv1.PhaseSkipped {
		t.Fatalf("before the retry sweep.2 is %s, want Skipped (the map stopped at item 1)", p)
	}
	writeFile(t, dir, "fix", "")
	if r := kilnBounded(t, home, "retry", "-q", string(id)); r.code != 0 {
		t.Fatalf("kiln retry exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := readOrEmpty(ledger), "item 0\nitem 1\nitem 1\nitem 2\nitem 3\n"; got != want {
		t.Errorf("ledger:\n%s\nwant item 0 once, item 1 twice, items 2 and 3 once:\n%s", got, want)
	}
	if got := readOrEmpty(exits); got != "Failed\nSucceeded\n" {
		t.Errorf("the exit handler saw %q; want Failed, then Succeeded after the retry", got)
	}
	run = describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseSucceeded || nodeNamed(t, run, "after").Phase != apiv1.PhaseSucceeded {
		t.Errorf("after the retry: run %s, after %s; want both Succeeded", run.Status.Phase, nodeNamed(t, run, "after").Phase)
	}
	if n := len(nodeNamed(t, run, "onExit.notify").Attempts); n != 2 {
		t.Errorf("onExit.notify has %d attempts recorded, want 2 (one per end of the run)", n)
	}
}

// TestRetryOfACancelledMapRunsItsCancelledAndSkippedItems: cancelled
// while its second item runs, a map's items left Cancelled and Skipped all
// run on kiln retry; the cancel ran no exit handler, the retry's end does.
func TestRetryOfACancelledMapRunsItsCancelledAndSkippedItems(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, fix, exits := filepath.Join(dir, "ledger"), filepath.Join(dir, "fix"), filepath.Join(dir, "exits")
	wf := writeFile(t, dir, "wf.yaml", sweepWorkflow(ledger, fix, exits, true))
	cmd := startKiln(t, home, "run", "-q", wf)
	waitFor(t, "item 1 to start", func() bool { return strings.Contains(readOrEmpty(ledger), "item 1") })
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
		t.Fatalf("kiln cancel: %d %s", r.code, r.stderr)
	}
	_ = cmd.Wait()
	run := describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseCancelled || nodeNamed(t, run, "sweep.1").Phase != apiv1.PhaseCancelled || nodeNamed(t, run, "sweep.3").Phase != apiv1.PhaseSkipped {
		t.Fatalf("after cancel: run %s, sweep.1 %s, sweep.3 %s; want Cancelled, Cancelled, Skipped",
			run.Status.Phase, nodeNamed(t, run, "sweep.1").Phase, nodeNamed(t, run, "sweep.3").Phase)
	}
	writeFile(t, dir, "fix", "")
	if r := kilnBounded(t, home, "retry", "-q", string(id)); r.code != 0 {
		t.Fatalf("kiln retry exited %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if got, want := readOrEmpty(ledger), "item 0\nitem 1\nitem 1\nitem 2\nitem 3\n"; got != want {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, want)
	}
	if got := readOrEmpty(exits); got != "Succeeded\n" {
		t.Errorf("the exit handler saw %q; want only Succeeded (a cancel runs none)", got)
	}
}

// TestExitHandlersReadTheRunsResult is Argo's exit-handlers example: one
// onExit task celebrates a success, another cries over a failure, by
// their conditions on workflow.status, workflow.failures and the main
// task's outcome.
func TestExitHandlersReadTheRunsResult(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	said, fix := filepath.Join(dir, "said"), filepath.Join(dir, "fix")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: exit-handlers}
spec:
  tasks:
  - name: intentional-fail
    command: [test, -e, `+fix+`]
  onExit:
  - name: celebrate
    when: 'workflow.status == "Succeeded"'
    command: [sh, -c, 'echo hooray >> `+said+`']
  - name: cry
    when: 'workflow.status == "Failed" && tasks["intentional-fail"].failed && workflow.failures.exists(f, f.name == "intentional-fail")'
    command: [sh, -c, 'echo boohoo >> `+said+`']
`)
	if r := kilnBounded(t, home, "run", "-q", wf); r.code != 1 {
		t.Fatalf("run exited %d, want 1: %s", r.code, r.stderr)
	}
	id := runs(t, home)[0].ID
	if got := readOrEmpty(said); got != "boohoo\n" {
		t.Errorf("after the failure the handlers said %q, want boohoo", got)
	}
	if p := nodeNamed(t, describe(t, home, id), "onExit.celebrate").Phase; p != apiv1.PhaseSkipped {
		t.Errorf("celebrate is %s after a failure, want Skipped", p)
	}
	writeFile(t, dir, "fix", "")
	if r := kilnBounded(t, home, "retry", "-q", string(id)); r.code != 0 {
		t.Fatalf("retry exited %d: %s", r.code, r.stderr)
	}
	if got := readOrEmpty(said); got != "boohoo\nhooray\n" {
		t.Errorf("after the retry the handlers said %q, want boohoo then hooray", got)
	}
	bad := writeFile(t, dir, "bad.yaml", strings.Replace(readOrEmpty(wf), "  onExit:\n", "  - {name: peek, when: 'workflow.status == \"Failed\"', command: [\"true\"]}\n  onExit:\n", 1))
	if r := kiln(t, home, "validate", bad); r.code == 0 || !strings.Contains(r.stderr, "KLN-") || !strings.Contains(r.stderr, "onExit tasks only") {
		t.Errorf("a main task reading workflow: %d %s; want a coded error saying onExit tasks only", r.code, r.stderr)
	}
}

// TestRetryWithParamsAndRestartSuccessful: kiln retry -p changes a param
// for what runs again, --restart-successful --node runs a task that
// succeeded again with everything downstream of it, and the rest keeps
// its outputs; bad requests are coded errors that change nothing.
func TestRetryWithParamsAndRestartSuccessful(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: tune}
spec:
  params: [{name: lr, default: "bad"}]
  tasks:
  - name: prep
    command: [sh, -c, 'echo prep >> `+ledger+`']
  - name: train
    dependsOn: [prep]
    command: [sh, -c, 'echo "train {{params.lr}}" >> `+ledger+`; [ "{{params.lr}}" != bad ]']
  - name: side
    command: [sh, -c, 'echo side >> `+ledger+`']
`)
	if r := kilnBounded(t, home, "run", "-q", wf); r.code != 1 {
		t.Fatalf("first run exited %d, want 1: %s", r.code, r.stderr)
	}
	id := string(runs(t, home)[0].ID)
	for _, bad := range []struct {
		args []string
		code string
		says string
	}{
		{[]string{"-p", "nope=1"}, "KLN-1014", ""},
		{[]string{"--restart-successful", "--node", "nope"}, "KLN-4020", ""},
		{[]string{"--restart-successful", "--node", "onExit"}, "KLN-4020", "a retry runs it again at the run's new end"},
		{[]string{"--node", "prep"}, "KLN-4002", ""},
	} {
		if r := kilnBounded(t, home, append([]string{"retry", id}, bad.args...)...); r.code == 0 || !strings.Contains(r.stderr, bad.code) || !strings.Contains(r.stderr, bad.says) {
			t.Errorf("kiln retry %v: %d %s; want %s saying %q", bad.args, r.code, r.stderr, bad.code, bad.says)
		}
	}
	if p := describe(t, home, apiv1.RunID(id)).Status.Phase; p != apiv1.PhaseFailed {
		t.Fatalf("after refused retries the run is %s, want still Failed", p)
	}
	if r := kilnBounded(t, home, "retry", "-q", id, "-p", "lr=0.1", "--restart-successful", "--node", "prep"); r.code != 0 {
		t.Fatalf("kiln retry: %d %s%s", r.code, r.stdout, r.stderr)
	}
	got := strings.Split(strings.TrimSpace(readOrEmpty(ledger)), "\n")
	slices.Sort(got)
	want := []string{"prep", "prep", "side", "train 0.1", "train bad"}
	if !slices.Equal(got, want) {
		t.Errorf("ledger %q, want %q: prep restarted, train again with lr=0.1, side kept", got, want)
	}
	if run := describe(t, home, apiv1.RunID(id)); run.Params["lr"] != "0.1" || run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("after the retry: params %v, phase %s; want lr=0.1 and Succeeded", run.Params, run.Status.Phase)
	}
}
