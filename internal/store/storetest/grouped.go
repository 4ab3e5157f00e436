package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// testApplyTogether applies rounds of many runs at once, as an engine's
// workers do, some by an owner that lost its run: a store may commit them
// in one transaction, but each owner's change is stored whole and each
// thief's is refused and leaves nothing.
func testApplyTogether(t *testing.T, s store.Store) {
	const runs = 24
	for i := range runs {
		mustCreate(t, s, NewRun(apiv1.RunID(fmt.Sprintf("g%d", i)), "me"))
	}
	errs := make([]error, 2*runs)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 * runs {
		owner, phase := "me", apiv1.PhaseSucceeded
		if i%2 == 1 {
			owner, phase = "thief", apiv1.PhaseFailed
		}
		c := &store.Change{
			Run: apiv1.RunID(fmt.Sprintf("g%d", i/2)), Owner: owner,
			Nodes:  []apiv1.NodeStatus{{Name: "a", Phase: phase, StartedAt: &t0}},
			Events: []apiv1.Event{{Node: "a", Attempt: 1, Phase: phase, Reason: owner, Time: t0}},
		}
		wg.Go(func() {
			<-start
			errs[i] = s.Apply(t.Context(), c)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if i%2 == 0 && err != nil {
			t.Errorf("owner's apply %d: %v", i/2, err)
		}
		if i%2 == 1 && !errors.Is(err, store.ErrLeaseLost) {
			t.Errorf("thief's apply %d = %v, want ErrLeaseLost", i/2, err)
		}
	}
	for i := range runs {
		id := apiv1.RunID(fmt.Sprintf("g%d", i))
		got, err := s.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if p := got.Status.Nodes[0].Phase; p != apiv1.PhaseSucceeded {
			t.Errorf("run %s: node a is %s, want the owner's Succeeded", id, p)
		}
		events, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 2 || events[1].Reason != "me" || events[1].Seq <= events[0].Seq {
			t.Errorf("run %s: events %+v, want Submitted then the owner's alone, in order", id, events)
		}
	}
}
