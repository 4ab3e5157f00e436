package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// lead bids for holder at now with a ten-second lease.
func lead(t *testing.T, s store.Store, holder string, now time.Time, dead ...string) store.Leader {
	t.Helper()
	l, err := s.Lead(t.Context(), store.LeadParams{
		Holder: holder, Address: "http://" + holder, Now: now, Until: now.Add(10 * time.Second),
		IsDead: func(h string) bool { return len(dead) > 0 && dead[0] == h },
	})
	if err != nil {
		t.Fatalf("Lead(%s): %v", holder, err)
	}
	return l
}

// testLeadership checks who leads: the first bidder, until its lease
// expires, it resigns or it is known dead; each new leader a new term.
func testLeadership(t *testing.T, s store.Store) {
	if l, err := s.Leader(t.Context()); err != nil || l.Term != 0 {
		t.Fatalf("Leader() of a new store = %+v, %v; want none", l, err)
	}
	steps := []struct {
		holder string
		at     time.Duration
		dead   string
		want   string
		term   int64
	}{
		{"a", 0, "", "a", 1},
		{"b", time.Second, "", "a", 1},      // a's lease is live
		{"a", 5 * time.Second, "", "a", 1},  // a renews, keeping its term
		{"b", 14 * time.Second, "", "a", 1}, // renewed until 15s
		{"b", 16 * time.Second, "", "b", 2}, // expired: b takes over
		{"c", 17 * time.Second, "b", "c", 3},
	}
	for _, st := range steps {
		l := lead(t, s, st.holder, t0.Add(st.at), st.dead)
		if l.Holder != st.want || l.Term != st.term {
			t.Fatalf("%s bids at %v: leader %s term %d, want %s term %d", st.holder, st.at, l.Holder, l.Term, st.want, st.term)
		}
	}
	got, err := s.Leader(t.Context())
	if err != nil || got.Holder != "c" || got.Term != 3 || got.Address != "http://c" || !got.Since.Equal(t0.Add(17*time.Second)) {
		t.Fatalf("Leader() = %+v, %v; want c, term 3, since 17s", got, err)
	}
	if err := s.Resign(t.Context(), "c", 2); err != nil {
		t.Fatal(err)
	}
	if l := lead(t, s, "d", t0.Add(18*time.Second)); l.Holder != "c" {
		t.Fatalf("a resignation under an old term ended the lease: leader %+v", l)
	}
	if err := s.Resign(t.Context(), "c", 3); err != nil {
		t.Fatal(err)
	}
	if l := lead(t, s, "d", t0.Add(18*time.Second)); l.Holder != "d" || l.Term != 4 {
		t.Fatalf("after c resigned, d bids: leader %+v, want d term 4", l)
	}
}

// testLeadershipRace checks that of replicas bidding at once, one leads.
func testLeadershipRace(t *testing.T, s store.Store) {
	var mu sync.Mutex
	seen := map[string]int64{}
	var wg sync.WaitGroup
	for _, h := range []string{"x", "y", "z", "w"} {
		wg.Go(func() {
			l, err := s.Lead(context.Background(), store.LeadParams{Holder: h, Now: t0, Until: t0.Add(time.Minute)})
			if err != nil {
				t.Errorf("Lead(%s): %v", h, err)
				return
			}
			mu.Lock()
			seen[l.Holder] = l.Term
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(seen) != 1 {
		t.Fatalf("bidders saw different leaders: %v", seen)
	}
	for h, term := range seen {
		if term != 1 {
			t.Errorf("leader %s has term %d, want 1", h, term)
		}
	}
}

// testFencing checks that writes under an ended term are refused and
// write nothing, and that a new leader claims the old one's runs at once.
func testFencing(t *testing.T, s store.Store) {
	ctx := t.Context()
	old := lead(t, s, "old", t0)
	p := NewRun("r1", "old")
	p.Term = old.Term
	mustCreate(t, s, p)
	mustCreate(t, s, NewRun("mine", "kiln-run")) // an engine that leads nothing, its lease live
	if err := s.Apply(ctx, &store.Change{Run: "r1", Owner: "old", Term: old.Term, Events: []apiv1.Event{{Reason: "Before", Time: t0}}}); err != nil {
		t.Fatalf("Apply by the leader: %v", err)
	}
	next := lead(t, s, "new", t0.Add(11*time.Second))
	if next.Holder != "new" || next.Term != old.Term+1 {
		t.Fatalf("takeover: leader %+v", next)
	}
	stale := &store.Change{
		Run: "r1", Owner: "old", Term: old.Term, Events: []apiv1.Event{{Reason: "Stale", Time: t0}},
		Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed},
	}
	if err := s.Apply(ctx, stale); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("Apply under the ended term: %v, want ErrFenced", err)
	}
	q := NewRun("r2", "old")
	q.Term = old.Term
	if err := s.CreateRun(ctx, q); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("CreateRun under the ended term: %v, want ErrFenced", err)
	}
	if _, err := s.GetRun(ctx, "r2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused CreateRun left run r2 behind: %v", err)
	}
	if _, err := s.ClaimRuns(ctx, store.ClaimRunsParams{Owner: "old", Now: t0, Until: t0.Add(time.Hour), Term: old.Term}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("ClaimRuns under the ended term: %v, want ErrFenced", err)
	}
	ids, err := s.ClaimRuns(ctx, store.ClaimRunsParams{Owner: "new", Now: t0.Add(11 * time.Second), Until: t0.Add(time.Hour), Term: next.Term})
	if err != nil || len(ids) != 1 || ids[0].ID != "r1" {
		t.Fatalf("new leader claims %v, %v; want r1 only (r1's lease is live, but an ended term's)", ids, err)
	}
	run, err := s.GetRun(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if run.Status.Phase != apiv1.PhasePending {
		t.Errorf("the stale Apply changed the run's phase to %s", run.Status.Phase)
	}
	events, err := s.ListEvents(ctx, store.ListEventsParams{Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Reason == "Stale" {
			t.Errorf("the stale Apply's event was written: %+v", e)
		}
	}
	if err := s.Apply(ctx, &store.Change{Run: "r1", Owner: "new", Term: next.Term, Events: []apiv1.Event{{Reason: "After", Time: t0}}}); err != nil {
		t.Fatalf("Apply by the new leader: %v", err)
	}
}
