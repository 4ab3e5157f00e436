package train_test

import (
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/train"
)

func TestReportShowsAGangWaitingToBePlacedAsQueued(t *testing.T) {
	t.Parallel()
	var ns apiv1.NodeStatus
	h := train.New()
	spec := &job.Spec{Processes: []job.Process{{Name: "node-0-0"}, {Name: "node-1-0"}, {Name: "node-2-0"}}}
	h.Report(&ns, node.Change{Phase: apiv1.PhaseRunning, Reason: "Started", Started: spec})
	const why = "pod p1: 0/4 nodes are available: 4 Insufficient cpu."
	h.Report(&ns, node.Change{Reason: "Queued", Message: "queued: ...", Queue: &job.Queue{
		Reason: "Unschedulable", Message: why, Processes: []string{"node-1-0", "node-2-0"},
	}})
	cond := func(typ string) apiv1.Condition {
		for _, c := range ns.Conditions {
			if c.Type == typ {
				return c
			}
		}
		return apiv1.Condition{}
	}
	want := apiv1.ReplicaGroupStatus{Name: "node", Active: 1, Pending: 2}
	if q := cond(apiv1.ConditionQueued); q.Status != "True" || q.Reason != "Unschedulable" || q.Message != why {
		t.Errorf("Queued condition %+v, want True with the scheduler's reason", q)
	}
	if r := cond(apiv1.ConditionRunning); r.Status != "False" || len(ns.Replicas) != 1 || ns.Replicas[0] != want {
		t.Errorf("Running condition %+v, replicas %+v; want not running, replicas %+v", r, ns.Replicas, want)
	}
	h.Report(&ns, node.Change{Reason: "Placed", Message: "every process was placed", Placed: true})
	want = apiv1.ReplicaGroupStatus{Name: "node", Active: 3}
	if q, r := cond(apiv1.ConditionQueued), cond(apiv1.ConditionRunning); q.Status != "False" || r.Status != "True" || ns.Replicas[0] != want {
		t.Errorf("after placement: Queued %s, Running %s, replicas %+v; want False, True, %+v", q.Status, r.Status, ns.Replicas, want)
	}
}
