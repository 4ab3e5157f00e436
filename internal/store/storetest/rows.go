package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// testApplyManyRows applies one round with more nodes, attempts and events
// than one statement of a store may hold, in counts that are no multiple
// of any batch: every row is stored whole, the nodes after the run's own
// in the order given, the events in order.
func testApplyManyRows(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	const nodes, events = 203, 301
	c := &store.Change{Run: "r1", Owner: "me"}
	var want []apiv1.NodeStatus
	for i := range nodes {
		name := fmt.Sprintf("c%03d", i)
		n := apiv1.NodeStatus{Name: name, Phase: apiv1.PhaseRunning, Parent: "a", Message: name, StartedAt: &t0}
		c.Added = append(c.Added, n)
		a := apiv1.AttemptStatus{Number: 1, ID: "r1/" + name + "/1", Phase: apiv1.PhaseRunning, Message: name, StartedAt: &t0}
		c.Attempts = append(c.Attempts, store.AttemptRow{Node: name, AttemptStatus: a})
		n.Attempts = []apiv1.AttemptStatus{a}
		want = append(want, n)
	}
	for i := range events {
		c.Events = append(c.Events, apiv1.Event{Node: fmt.Sprintf("c%03d", i%nodes), Phase: apiv1.PhaseRunning, Reason: fmt.Sprint(i), Time: t0})
	}
	apply(t, s, c)
	got := get(t, s, "r1").Status.Nodes
	if len(got) != nodes+2 {
		t.Fatalf("%d nodes, want the run's 2 and %d added", len(got), nodes)
	}
	if diff := cmp.Diff(want, got[2:]); diff != "" {
		t.Errorf("added nodes (-want +got):\n%s", diff)
	}
	list, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r1", Limit: events + 10})
	if err != nil {
		t.Fatal(err)
	}
	list = list[len(list)-events:]
	for i, e := range list {
		if e.Reason != fmt.Sprint(i) || (i > 0 && e.Seq <= list[i-1].Seq) {
			t.Fatalf("event %d of the round: %+v, want reason %d, numbered after the one before", i, e, i)
		}
	}
}

// testApplyOneAttemptTwice applies a round that writes one attempt twice:
// the later row is the one stored, as if the two were written in turn.
func testApplyOneAttemptTwice(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	end := t0.Add(time.Second)
	running := apiv1.AttemptStatus{Number: 1, ID: "r1/a/1", Phase: apiv1.PhaseRunning, StartedAt: &t0}
	done := running
	done.Phase, done.FinishedAt = apiv1.PhaseSucceeded, &end
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Attempts: []store.AttemptRow{
		{Node: "a", AttemptStatus: running}, {Node: "b", AttemptStatus: running}, {Node: "a", AttemptStatus: done},
	}})
	nodes := get(t, s, "r1").Status.Nodes
	if diff := cmp.Diff([]apiv1.AttemptStatus{done}, nodes[0].Attempts); diff != "" {
		t.Errorf("node a's attempts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]apiv1.AttemptStatus{running}, nodes[1].Attempts); diff != "" {
		t.Errorf("node b's attempts (-want +got):\n%s", diff)
	}
}
