package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func i32(v int32) *int32 { return &v }

// testProgress checks that a run's progress is kept with its status (and
// listed without its nodes), that a node's trainer status reads back, and
// that a retry counts the run afresh and drops what retried nodes reported.
func testProgress(t *testing.T, s store.Store) {
	p := NewRun("r1", "me")
	p.Nodes = []string{"a", "b", "m", "m.0", "m.1"}
	mustCreate(t, s, p)
	if got := listed(t, s, "r1"); !cmp.Equal(got, &apiv1.RunProgress{Total: 5}) {
		t.Errorf("a new run's progress = %+v, want 5 tasks, none done", got)
	}
	ts := &apiv1.TrainerStatus{
		ProgressPercentage: i32(40), EstimatedRemainingSeconds: i32(120),
		Metrics: []apiv1.Metric{{Name: "loss", Value: "0.5"}}, LastUpdatedTime: t0,
	}
	want := apiv1.RunProgress{Total: 4, Done: 3, Succeeded: 2, Failed: 1}
	apply(t, s, &store.Change{
		Run: "r1", Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed, FinishedAt: &t0, Progress: &want},
		Nodes: []apiv1.NodeStatus{
			{Name: "a", Phase: apiv1.PhaseSucceeded, TrainerStatus: ts},
			{Name: "b", Phase: apiv1.PhaseFailed, TrainerStatus: ts},
			{Name: "m", Phase: apiv1.PhaseFailed, Children: &apiv1.ChildCounts{Total: 2}},
			{Name: "m.0", Phase: apiv1.PhaseSucceeded},
			{Name: "m.1", Phase: apiv1.PhaseCancelled},
		},
	})
	run := get(t, s, "r1")
	if !cmp.Equal(run.Status.Progress, &want) || !cmp.Equal(listed(t, s, "r1"), &want) {
		t.Errorf("progress read back as %+v, listed as %+v; want %+v", run.Status.Progress, listed(t, s, "r1"), want)
	}
	if diff := cmp.Diff(ts, run.Status.Nodes[0].TrainerStatus); diff != "" {
		t.Errorf("trainer status (-want +got):\n%s", diff)
	}
	if err := s.RetryRun(t.Context(), "r1", store.Retry{Owner: "me", Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	run = get(t, s, "r1")
	// a and m.0 succeeded; b, m.1 run again; m counts through its children.
	if want := (&apiv1.RunProgress{Total: 4, Done: 2, Succeeded: 2}); !cmp.Equal(run.Status.Progress, want) {
		t.Errorf("after a retry progress = %+v, want %+v", run.Status.Progress, want)
	}
	if run.Status.Nodes[0].TrainerStatus == nil || run.Status.Nodes[1].TrainerStatus != nil {
		t.Errorf("after a retry the trainer statuses are %+v and %+v; want a's kept, b's dropped",
			run.Status.Nodes[0].TrainerStatus, run.Status.Nodes[1].TrainerStatus)
	}
}

// listed is run id's progress as ListRuns returns it.
func listed(t *testing.T, s store.Store, id apiv1.RunID) *apiv1.RunProgress {
	t.Helper()
	runs, err := s.ListRuns(t.Context(), store.ListRunsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == id {
			return r.Status.Progress
		}
	}
	t.Fatalf("run %s is not listed", id)
	return nil
}
