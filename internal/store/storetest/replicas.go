package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// RunReplicas runs the cases where several stores share one database, as
// kiln serve replicas do: claims, fences and event numbers under
// concurrent writers. open must return n stores on one new, empty
// database, each with connections of its own, closed by t.Cleanup.
func RunReplicas(t *testing.T, open func(t *testing.T, n int) []store.Store) {
	t.Helper()
	t.Run("concurrent claimers win each run exactly once", func(t *testing.T) { t.Parallel(); testClaimStorm(t, open(t, 3)) })
	t.Run("a stale owner's apply is refused once another claimed the run", func(t *testing.T) { t.Parallel(); testStaleApply(t, open(t, 2)) })
	t.Run("concurrent writers' events get distinct sequence numbers in order", func(t *testing.T) { t.Parallel(); testEventSeqs(t, open(t, 3)) })
}

// testClaimStorm has 12 claimers, spread over the stores, claim 60 runs
// whose leases expired, all at once: each run is won by one of them.
func testClaimStorm(t *testing.T, stores []store.Store) {
	const runs, claimers = 60, 12
	for i := range runs {
		mustCreate(t, stores[0], NewRun(apiv1.RunID(fmt.Sprintf("r%02d", i)), "gone"))
	}
	now := t0.Add(2 * time.Hour) // past every lease
	var mu sync.Mutex
	won := map[apiv1.RunID][]string{}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for c := range claimers {
		owner := fmt.Sprintf("engine-%d", c)
		wg.Go(func() {
			<-start
			ids, err := stores[c%len(stores)].ClaimRuns(context.Background(), store.ClaimRunsParams{Owner: owner, Now: now, Until: now.Add(time.Minute)})
			if err != nil {
				t.Errorf("ClaimRuns(%s): %v", owner, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, c := range ids {
				won[c.ID] = append(won[c.ID], owner)
			}
		})
	}
	close(start)
	wg.Wait()
	for i := range runs {
		id := apiv1.RunID(fmt.Sprintf("r%02d", i))
		if len(won[id]) != 1 {
			t.Errorf("run %s was won by %v, want exactly one claimer", id, won[id])
		}
	}
}

// testStaleApply has owner a apply rounds without pause while b, through
// another store, claims the run once a's lease is past, reads it and
// applies its own round. Every round a was told was applied is stored and
// was there when b read the run (none committed after b's claim), none
// that was refused is, and a is refused from then on.
func testStaleApply(t *testing.T, stores []store.Store) {
	ctx := t.Context()
	p := NewRun("r1", "a")
	mustCreate(t, stores[0], p)
	var applied int
	refused, going := make(chan error, 1), make(chan struct{})
	// a's rounds go freely until going; then one round races b's claim
	// and the next comes after it. A free loop racing the claim starved it
	// in SQLite, whose waiting writer only polls for the lock.
	claiming, claimed := make(chan struct{}), make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			switch i {
			case 5:
				<-claiming
			case 6:
				<-claimed
			}
			c := &store.Change{Run: "r1", Owner: "a", Events: []apiv1.Event{{Phase: apiv1.PhaseRunning, Reason: "A", Message: fmt.Sprint(i), Time: t0}}}
			for n := range 20 { // work after the fence: a claim may come in between
				c.Attempts = append(c.Attempts, store.AttemptRow{Node: "a", AttemptStatus: apiv1.AttemptStatus{Number: n, ID: fmt.Sprint(n), Phase: apiv1.PhaseRunning}})
			}
			if i%2 == 1 { // the fence that updates the run, and the one that only reads it
				c.Status = &apiv1.RunStatus{Phase: apiv1.PhaseRunning, Message: fmt.Sprint(i)}
			}
			err := stores[0].Apply(context.Background(), c)
			if err != nil {
				refused <- err
				return
			}
			if applied++; applied == 5 {
				close(going)
			}
		}
	}()
	select { // let a apply some rounds
	case <-going:
	case err := <-refused:
		t.Fatalf("a's apply = %v before anyone claimed the run", err)
	}
	now := p.LeaseUntil.Add(time.Second)
	close(claiming)
	ids, err := stores[1].ClaimRuns(ctx, store.ClaimRunsParams{Owner: "b", Now: now, Until: now.Add(time.Hour)})
	close(claimed)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ClaimRuns(b) = %v, %v, want r1", ids, err)
	}
	seen, err := stores[1].ListEvents(ctx, store.ListEventsParams{Run: "r1"}) // what b takes over
	if err != nil {
		t.Fatal(err)
	}
	if err := stores[1].Apply(ctx, &store.Change{Run: "r1", Owner: "b", Events: []apiv1.Event{{Phase: apiv1.PhaseRunning, Reason: "B", Time: t0}}}); err != nil {
		t.Fatalf("Apply(b) = %v", err)
	}
	select {
	case err := <-refused:
		if !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("a's apply after the claim = %v, want ErrLeaseLost", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a's applies were never refused after b claimed the run")
	}
	if err := stores[0].Apply(ctx, &store.Change{Run: "r1", Owner: "a", Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("a's apply of a status after the claim = %v, want ErrLeaseLost", err)
	}
	if got := len(seen) - 1; got != applied { // less the Submitted event
		t.Errorf("b saw %d rounds of a when it took the run over, but %d were applied: a wrote after losing the lease", got, applied)
	}
	checkStaleEvents(t, stores[1], applied)
}

// checkStaleEvents checks that r1 holds a's applied rounds, in order, all
// before b's one.
func checkStaleEvents(t *testing.T, s store.Store, applied int) {
	t.Helper()
	events, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	var as, bs int
	for _, e := range events {
		switch e.Reason {
		case "A":
			if bs > 0 {
				t.Errorf("a's round %s was stored after b's", e.Message)
			}
			if e.Message != fmt.Sprint(as) {
				t.Errorf("a's rounds are out of order: %s where %d was due", e.Message, as)
			}
			as++
		case "B":
			bs++
		}
	}
	if as != applied || bs != 1 {
		t.Errorf("stored %d rounds of a and %d of b, want %d (those applied) and 1", as, bs, applied)
	}
	r, err := s.GetRun(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.Phase == apiv1.PhaseFailed {
		t.Error("a's refused status was written")
	}
}

// testEventSeqs has 8 writers, spread over the stores, apply rounds of
// two events to 4 runs at once: every event is stored once, with a
// sequence number no other event has, in the order of its run's rounds.
func testEventSeqs(t *testing.T, stores []store.Store) {
	const runs, writers, rounds = 4, 8, 10
	for r := range runs {
		mustCreate(t, stores[0], NewRun(apiv1.RunID(fmt.Sprintf("r%d", r)), "me"))
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range rounds {
				run := apiv1.RunID(fmt.Sprintf("r%d", (w+i)%runs))
				ev := apiv1.Event{Phase: apiv1.PhaseRunning, Reason: "Round", Message: fmt.Sprintf("%d/%d", w, i), Time: t0}
				second := ev
				second.Reason = "RoundEnd"
				c := &store.Change{Run: run, Owner: "me", Events: []apiv1.Event{ev, second}}
				if err := stores[w%len(stores)].Apply(context.Background(), c); err != nil {
					t.Errorf("Apply: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	total := 0
	for r := range runs {
		events, err := stores[0].ListEvents(t.Context(), store.ListEventsParams{Run: apiv1.RunID(fmt.Sprintf("r%d", r))})
		if err != nil {
			t.Fatal(err)
		}
		checkRounds(t, events, seen)
		total += len(events)
	}
	if want := runs + writers*rounds*2; total != want { // one Submitted event per run
		t.Errorf("stored %d events, want %d", total, want)
	}
}

// checkRounds checks a run's events: sequence numbers rising and unseen
// before, and each round's two events side by side.
func checkRounds(t *testing.T, events []apiv1.Event, seen map[int64]bool) {
	t.Helper()
	for i, e := range events {
		if seen[e.Seq] {
			t.Errorf("sequence number %d was given twice", e.Seq)
		}
		seen[e.Seq] = true
		if i > 0 && e.Seq <= events[i-1].Seq {
			t.Errorf("sequence numbers go back: %d after %d", e.Seq, events[i-1].Seq)
		}
		if e.Reason == "RoundEnd" && (i == 0 || events[i-1].Reason != "Round" || events[i-1].Message != e.Message) {
			t.Errorf("round %s's events were split by another round's", e.Message)
		}
	}
}
