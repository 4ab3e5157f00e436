package controller

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// TestRoomWaits plays sequences of waits and wakes against roomWaits and
// checks which runs each step has go round.
func TestRoomWaits(t *testing.T) {
	t.Parallel()
	type step struct {
		op   string // "add", "wake", "forget"
		run  apiv1.RunID
		seen uint64 // add: the wakes the run saw; wake: the caller's
		want []apiv1.RunID
	}
	for _, tc := range []struct {
		name      string
		steps     []step
		others    apiv1.RunID // othersStarved(others) at the end
		wantOther bool
	}{
		{
			name:   "a wake has every waiting run but the giver go round",
			steps:  []step{{op: "add", run: "a"}, {op: "add", run: "b"}, {op: "wake", run: "a", want: []apiv1.RunID{"b"}}},
			others: "a",
		},
		{
			name:   "a run that waited on a stale answer goes round at once",
			steps:  []step{{op: "wake", run: ""}, {op: "add", run: "a", seen: 0, want: []apiv1.RunID{"a"}}},
			others: "b", wantOther: true,
		},
		{
			name:  "a run alone waiting starves no other",
			steps: []step{{op: "add", run: "a"}}, others: "a",
		},
		{
			name:  "another run waiting is seen",
			steps: []step{{op: "add", run: "a"}, {op: "add", run: "b"}}, others: "a", wantOther: true,
		},
		{
			name:  "a forgotten run is not woken",
			steps: []step{{op: "add", run: "a"}, {op: "forget", run: "a"}, {op: "wake", run: ""}}, others: "b",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var woken []apiv1.RunID
			w := newRoomWaits(resource.Request{}, func(id apiv1.RunID) { woken = append(woken, id) })
			for k, s := range tc.steps {
				woken = nil
				switch s.op {
				case "add":
					w.add(s.run, s.seen)
				case "wake":
					w.wake(s.run, w.seq())
				case "forget":
					w.forget(s.run)
				}
				slices.Sort(woken)
				if !slices.Equal(woken, s.want) {
					t.Errorf("step %d (%s %s): woke %v, want %v", k, s.op, s.run, woken, s.want)
				}
			}
			if got := w.othersStarved(tc.others); got != tc.wantOther {
				t.Errorf("othersStarved(%s) = %v, want %v", tc.others, got, tc.wantOther)
			}
		})
	}
}

// TestRoomWaitsWakeMovesTheCallersSeen: a wake with no other since the
// caller's answer moves its seen past it, so its own add does not have
// it go round again; a wake that raced another does not.
func TestRoomWaitsWakeMovesTheCallersSeen(t *testing.T) {
	t.Parallel()
	w := newRoomWaits(resource.Request{}, func(apiv1.RunID) {})
	seen := w.seq()
	if got := w.wake("a", seen); got != seen+1 {
		t.Errorf("a lone wake returned %d, want %d", got, seen+1)
	}
	w.wake("", 0) // another engine's room came back meanwhile
	if got := w.wake("a", seen); got != seen {
		t.Errorf("a wake after another returned %d, want the caller's %d kept", got, seen)
	}
}

func TestHoldoff(t *testing.T) {
	t.Parallel()
	h := newHoldoff()
	// Backoffs of hours, so that no load on the machine lets one run out
	// while the test looks.
	h.delay = workqueue.NewTypedItemExponentialFailureRateLimiter[apiv1.RunID](time.Hour, 10*time.Hour)
	if d := h.heldOff("r"); d != 0 {
		t.Fatalf("a run that never failed is held off %v", d)
	}
	first, second := h.failed("r"), h.failed("r")
	if first <= 0 || second <= first {
		t.Errorf("backoffs %v then %v, want growing", first, second)
	}
	if d := h.heldOff("r"); d <= 0 || d > second {
		t.Errorf("held off %v after a %v backoff", d, second)
	}
	if d := h.heldOff("other"); d != 0 {
		t.Errorf("another run is held off %v", d)
	}
	h.succeeded("r")
	if d := h.heldOff("r"); d != 0 {
		t.Errorf("held off %v after a round that succeeded", d)
	}
	if d := h.failed("r"); d != first {
		t.Errorf("the backoff after a success is %v, want the first again (%v)", d, first)
	}
}

func TestOutages(t *testing.T) {
	t.Parallel()
	full := &apiv1.Error{Code: apiv1.CodeStoreFull, Message: "disk full"}
	for _, tc := range []struct {
		name   string
		errs   []error
		rounds int // 0: no event
	}{
		{"an engine error is no outage", []error{errors.New("the backend failed")}, 0},
		{"a coded error of another kind is none", []error{&apiv1.Error{Code: apiv1.CodeRunPhase, Message: "ended"}}, 0},
		{"the store's error is one", []error{full}, 1},
		{"its rounds are counted", []error{full, fmt.Errorf("saving: %w", full), full}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newOutages()
			for _, err := range tc.errs {
				u.unsaved("r", err)
			}
			ev, ok := u.event("r", apiv1.PhaseRunning, time.Now().UTC())
			if ok != (tc.rounds > 0) {
				t.Fatalf("event: %v, want one: %v", ok, tc.rounds > 0)
			}
			if !ok {
				return
			}
			if want := fmt.Sprintf("(%d rounds)", tc.rounds); ev.Code != apiv1.CodeStoreFull || !strings.Contains(ev.Message, want) {
				t.Errorf("event %s %q, want %s and %q", ev.Code, ev.Message, apiv1.CodeStoreFull, want)
			}
			u.recorded("r")
			if _, again := u.event("r", apiv1.PhaseRunning, time.Now().UTC()); again {
				t.Error("the outage was recorded twice")
			}
		})
	}
}

func TestLeadership(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	l := newLeadership("engine-1", 15*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if l.owner() != "engine-1" || !l.leaseUntil(now).Equal(now.Add(15*time.Second)) || l.Following() {
		t.Errorf("a new engine: owner %q until %v following %v; want itself, its TTL, leading", l.owner(), l.leaseUntil(now), l.Following())
	}
	l.Follow()
	if l.owner() != "" || l.leaseUntil(now).After(now) || !l.Following() {
		t.Errorf("a follower: owner %q until %v; want nobody, a lease already over", l.owner(), l.leaseUntil(now))
	}
	l.Lead(7)
	if l.owner() != "engine-1" || l.Term() != 7 || l.Following() {
		t.Errorf("a leader of term 7: owner %q term %d following %v", l.owner(), l.Term(), l.Following())
	}
	if l.wasFenced(errors.New("disk full")) {
		t.Error("an error that is not the store's fence fenced the engine")
	}
	select {
	case <-l.Fenced():
		t.Fatal("Fenced closed before any fence")
	default:
	}
	for range 2 { // twice: closing again must not panic
		if !l.wasFenced(fmt.Errorf("saving: %w", store.ErrFenced)) {
			t.Error("the store's fence was not taken as one")
		}
	}
	<-l.Fenced()
}

func TestQuotaSetWakesHeldRuns(t *testing.T) {
	t.Parallel()
	var woken []apiv1.RunID
	qs := &quotaState{enqueue: func(id apiv1.RunID) { woken = append(woken, id) }}
	qs.held = map[string]map[apiv1.RunID]struct{}{"a": {"r1": {}}, "b": {"r2": {}}}
	pool := resource.NewPool(resource.Request{MilliCPU: 1000})
	err := qs.set(t.Context(), pool, []apiv1.ProjectQuota{
		{Metadata: apiv1.QuotaMetadata{Name: "a"}, Spec: apiv1.ProjectQuotaSpec{Runs: 2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(woken)
	if !slices.Equal(woken, []apiv1.RunID{"r1", "r2"}) || !qs.quotasOn() || qs.limits["a"] != 2 {
		t.Errorf("after set: woke %v, on %v, limits %v; want every held run woken, quotas on, a's limit 2", woken, qs.quotasOn(), qs.limits)
	}
}
