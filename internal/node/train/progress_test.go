package train

import (
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
)

func nodeChange(phase apiv1.Phase, at time.Time) node.Change {
	return node.Change{Phase: phase, Reason: string(phase), Time: at}
}

func TestProgressKeepsTheLastGoodReport(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var ns apiv1.NodeStatus
	h := Handler{}
	if !h.Progress(&ns, []byte(`{"progressPercentage": 40}`), t0) || *ns.TrainerStatus.ProgressPercentage != 40 {
		t.Fatalf("a first report is not kept: %+v", ns.TrainerStatus)
	}
	if h.Progress(&ns, []byte(`{"progressPerc`), t0.Add(time.Second)) || *ns.TrainerStatus.ProgressPercentage != 40 {
		t.Errorf("a half-written report replaced the last good one: %+v", ns.TrainerStatus)
	}
	if h.Progress(&ns, []byte(`{"progressPercentage": 40}`), t0.Add(2*time.Second)) || !ns.TrainerStatus.LastUpdatedTime.Equal(t0) {
		t.Errorf("the same report again counts as a change: %+v", ns.TrainerStatus)
	}
	h.Report(&ns, nodeChange(apiv1.PhaseSucceeded, t0.Add(3*time.Second)))
	if ts := ns.TrainerStatus; *ts.ProgressPercentage != 100 || *ts.EstimatedRemainingSeconds != 0 {
		t.Errorf("after success the trainer status is %+v, want 100%% with nothing left", ts)
	}
	var silent apiv1.NodeStatus
	h.Report(&silent, nodeChange(apiv1.PhaseSucceeded, t0))
	if silent.TrainerStatus != nil {
		t.Errorf("a job that reported nothing got a trainer status: %+v", silent.TrainerStatus)
	}
}
