package controller

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// recount counts a stored run's nodes as its progress must: every node
// but those that expanded into children.
func recount(run *apiv1.Run) *apiv1.RunProgress {
	var p apiv1.RunProgress
	for _, n := range run.Status.Nodes {
		if n.Children == nil {
			p.Add(n.Phase, 1)
		}
	}
	return &p
}

func TestProgressCountsMapChildrenAndFollowsARetry(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 4)
	fixed := filepath.Join(t.TempDir(), "fixed")
	id := e.submit(t, `spec:
  tasks:
  - {name: first, command: ["true"]}
  - name: each
    dependsOn: [first]
    forEach: {range: {count: 5}}
    command: [sh, -c, 'test "$0" != 3 || test -e `+fixed+`', '{{item}}']
  - {name: after, dependsOn: [each], command: ["true"]}
`, nil)
	run := e.wait(t, id)
	// first, 5 items (one failed, those not started by then skipped),
	// after skipped; each counts through its items.
	p := run.Status.Progress
	if run.Status.Phase != apiv1.PhaseFailed || !cmp.Equal(p, recount(run)) ||
		p.Total != 7 || p.Done != 7 || p.Failed != 1 || p.Succeeded+p.Skipped != 6 {
		t.Fatalf("run %s with progress %+v (its nodes count %+v); want Failed, 7 tasks done, 1 failed", run.Status.Phase, p, recount(run))
	}
	if err := os.WriteFile(fixed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Retry(t.Context(), id, apiv1.RetryRequest{}); err != nil {
		t.Fatal(err)
	}
	run = e.wait(t, id)
	want := &apiv1.RunProgress{Total: 7, Done: 7, Succeeded: 7}
	if run.Status.Phase != apiv1.PhaseSucceeded || !cmp.Equal(run.Status.Progress, want) {
		t.Fatalf("retried run %s with progress %+v; want Succeeded with %+v", run.Status.Phase, run.Status.Progress, want)
	}
}

func TestProgressWhileRunningAndAfterARestart(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 4)
	release := filepath.Join(t.TempDir(), "go")
	id := e.submit(t, `spec:
  tasks:
  - {name: quick, command: ["true"]}
  - name: each
    forEach: {range: {count: 3}}
    command: [sh, -c, 'while [ ! -e `+release+` ]; do sleep 0.05; done']
`, nil)
	// quick done, the three items running: each counts through them. The
	// engine that takes the run over counts on from what the store holds.
	mid := &apiv1.RunProgress{Total: 4, Done: 1, Succeeded: 1, Running: 3}
	waitProgress(t, e, id, mid)
	e.stop()
	next := e.sibling(t, 4, "second")
	if _, err := next.Claim(t.Context(), []apiv1.RunID{id}, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := next.wait(t, id)
	if want := (&apiv1.RunProgress{Total: 4, Done: 4, Succeeded: 4}); !cmp.Equal(run.Status.Progress, want) {
		t.Errorf("progress at the end %+v, want %+v", run.Status.Progress, want)
	}
}

// waitProgress waits until run id's stored progress is want.
func waitProgress(t *testing.T, e *engine, id apiv1.RunID, want *apiv1.RunProgress) {
	t.Helper()
	var got *apiv1.RunProgress
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); <-time.After(20 * time.Millisecond) {
		run, err := e.store.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got = run.Status.Progress; cmp.Equal(got, want) {
			return
		}
	}
	t.Fatalf("progress is %+v, want %+v", got, want)
}

func TestATrainingJobReportsItsProgress(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	dir := t.TempDir()
	id := e.submit(t, `spec:
  tasks:
  - name: fit
    train:
      runtime: plain
      command: [sh, -c, 'echo "{\"progressPercentage\": 40, \"estimatedRemainingSeconds\": 90, \"metrics\": {\"loss\": 0.5}}" > $KILN_PROGRESS.tmp && mv $KILN_PROGRESS.tmp $KILN_PROGRESS; while [ ! -e `+dir+`/go ]; do sleep 0.05; done']
`, nil)
	var ts *apiv1.TrainerStatus
	for deadline := time.Now().Add(30 * time.Second); ts == nil && time.Now().Before(deadline); <-time.After(50 * time.Millisecond) {
		run, err := e.store.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		ts = nodeOf(run, "fit").TrainerStatus
	}
	if ts == nil || *ts.ProgressPercentage != 40 || *ts.EstimatedRemainingSeconds != 90 ||
		!cmp.Equal(ts.Metrics, []apiv1.Metric{{Name: "loss", Value: "0.5"}}) {
		t.Fatalf("while running the trainer status is %+v, want 40%%, 90s left, loss 0.5", ts)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := e.wait(t, id)
	ts = nodeOf(run, "fit").TrainerStatus
	if run.Status.Phase != apiv1.PhaseSucceeded || ts == nil || *ts.ProgressPercentage != 100 || *ts.EstimatedRemainingSeconds != 0 {
		t.Errorf("run %s, trainer status %+v; want Succeeded at 100%% with nothing left", run.Status.Phase, ts)
	}
}
