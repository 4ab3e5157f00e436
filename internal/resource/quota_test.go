package resource

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

var cpu1 = Request{MilliCPU: 1000}

func cpus(n int64) Request { return Request{MilliCPU: n * 1000} }

func quotaOf(cpu int64, borrow, preempt bool) Quota {
	return Quota{Nominal: Request{cpu * 1000, Unlimited, Unlimited}, Borrowing: borrow, Preempt: preempt, Weight: 1}
}

func claim(project, name string, req Request, prio int32) Claim {
	return Claim{Holder: name + "/1", Waiter: name, Project: project, Request: req, Priority: prio}
}

func TestQuotaHoldsAProjectBackAndLetsOthersPass(t *testing.T) {
	t.Parallel()
	l := NewLedger()
	l.SetQuotas(map[string]Quota{"a": quotaOf(2, false, false)})
	got := l.Admit("e", cpus(4), []Claim{claim("a", "a1", cpu1, 0), claim("a", "a2", cpu1, 0), claim("a", "a3", cpu1, 5), claim("b", "b1", cpu1, 0)})
	if !got[0].Admitted || !got[1].Admitted || got[2].Admitted || !got[3].Admitted {
		t.Fatalf("admitted %+v; want a1, a2 and b1: a3 is beyond a's quota of 2 cpus", got)
	}
	if got[2].Quota == "" || got[2].Outranked {
		t.Errorf("a3's answer %+v; want it held by its quota, with the reason", got[2])
	}
	// a3 waits at a higher priority, held by its own quota: it holds up no one else.
	if got := l.Admit("e", cpus(4), []Claim{claim("b", "b2", cpu1, 0)}); !got[0].Admitted {
		t.Errorf("b2 = %+v; want admitted past a3, which only its own quota holds", got[0])
	}
	l.Release("a1/1")
	if w := l.Waiting(); len(w) != 0 {
		t.Errorf("waiting after a1 ended = %v; want a3 granted a1's place in the quota", w)
	}
	if u := l.usage["a"]; u != cpus(2) {
		t.Errorf("a uses %v; want 2 cpus", u)
	}
}

func TestBorrowingTakesOnlyWhatNoOneWithinQuotaWaitsFor(t *testing.T) {
	t.Parallel()
	l := NewLedger()
	l.SetQuotas(map[string]Quota{"a": quotaOf(2, true, false), "b": quotaOf(2, true, false)})
	got := l.Admit("e", cpus(4), []Claim{claim("a", "a1", cpu1, 0), claim("a", "a2", cpu1, 0), claim("a", "a3", cpu1, 0)})
	if !got[2].Admitted {
		t.Fatalf("a3 = %+v; want it to borrow the capacity b does not use", got[2])
	}
	if got := l.Admit("e", cpus(4), []Claim{claim("b", "b1", cpus(2), 0)}); got[0].Admitted {
		t.Fatalf("b1 = %+v; want it waiting: 1 cpu is free", got[0])
	}
	if got := l.Admit("e", cpus(4), []Claim{claim("a", "a4", cpu1, 0)}); got[0].Admitted || got[0].Quota == "" {
		t.Errorf("a4 = %+v; want it held: b waits within its quota, so a may not borrow the free cpu", got[0])
	}
	l.Release("a1/1")
	if w := l.Waiting(); !slices.Equal(w, []string{"a4"}) {
		t.Errorf("waiting after a1 ended = %v; want b1 granted, a4 still waiting", w)
	}
}

func TestFairSharingGivesRoomInProportionToWeights(t *testing.T) {
	t.Parallel()
	l := NewLedger()
	l.SetQuotas(map[string]Quota{"a": {Nominal: Request{Unlimited, Unlimited, Unlimited}, Borrowing: true, Weight: 1}, "b": {Nominal: Request{Unlimited, Unlimited, Unlimited}, Borrowing: true, Weight: 3}})
	n := 0
	next := func(p string) Claim { n++; return claim(p, fmt.Sprintf("%s%d", p, n), cpu1, 0) }
	// Both projects keep 8 tasks waiting; the oldest holding ends each step.
	var held []string
	for range 8 {
		for _, c := range []Claim{next("a"), next("b")} {
			if l.Admit("e", cpus(4), []Claim{c})[0].Admitted {
				held = append(held, c.Holder)
			}
		}
	}
	granted := map[string]int{}
	for range 400 {
		l.Release(held[0])
		held = held[1:]
		for k, h := range l.held {
			if !slices.Contains(held, k) {
				held = append(held, k)
				granted[h.project]++
				c := next(h.project)
				l.Admit("e", cpus(4), []Claim{c}) // another of its tasks waits
			}
		}
	}
	ratio := float64(granted["b"]) / float64(granted["a"])
	if math.Abs(ratio-3)/3 > 0.1 {
		t.Errorf("granted %v: b/a = %.2f; want 3 within 10%%", granted, ratio)
	}
}

func TestPreemptionNamesLowerPriorityVictimsOfTheSameProject(t *testing.T) {
	t.Parallel()
	for _, preempt := range []bool{true, false} {
		l := NewLedger()
		l.SetQuotas(map[string]Quota{"a": quotaOf(Unlimited, true, preempt)})
		l.Admit("e", cpus(2), []Claim{claim("a", "low1", cpu1, 0), claim("a", "low2", cpu1, 0)})
		got := l.Admit("e", cpus(2), []Claim{claim("a", "high", cpu1, 10)})
		want := []string(nil)
		if preempt {
			want = []string{"low2/1"} // the latest taken
		}
		if got[0].Admitted || !slices.Equal(got[0].Preempt, want) {
			t.Errorf("preemption %v: high = %+v; want waiting, victims %v", preempt, got[0], want)
		}
		// A victim is named once; its release lets the waiting claim in.
		if again := l.Admit("e", cpus(2), []Claim{claim("a", "high", cpu1, 10)}); len(again[0].Preempt) != 0 {
			t.Errorf("asked again: victims %v; want none named twice", again[0].Preempt)
		}
		if preempt {
			l.Release("low2/1")
			if _, ok := l.held["high/1"]; !ok {
				t.Error("high holds nothing after its victim gave its room back")
			}
		}
	}
}

func TestPreemptionReclaimsWhatOtherProjectsBorrowed(t *testing.T) {
	t.Parallel()
	l := NewLedger()
	l.SetQuotas(map[string]Quota{"a": quotaOf(1, true, false), "b": quotaOf(2, true, true)})
	got := l.Admit("e", cpus(3), []Claim{claim("a", "a1", cpu1, 5), claim("a", "a2", cpu1, 5), claim("a", "a3", cpu1, 5), claim("b", "b1", cpu1, 0)})
	if !got[2].Admitted || got[3].Admitted {
		t.Fatalf("got %+v; want a to borrow all 3 cpus and b1 waiting", got)
	}
	if !slices.Equal(got[3].Preempt, []string{"a3/1"}) {
		t.Errorf("b1's victims = %v; want a3 alone, the latest of what a borrowed, whatever its priority", got[3].Preempt)
	}
	// b within its quota reclaims no more than a borrowed: a keeps its nominal cpu.
	l.Release("a3/1")
	got = l.Admit("e", cpus(3), []Claim{claim("b", "b2", cpus(2), 0)})
	if got[0].Admitted || !slices.Equal(got[0].Preempt, nil) {
		t.Errorf("b2 = %+v; want waiting with no victims: only a2 is borrowed, and b2 needs 2 cpus", got[0])
	}
}

func TestGangsAreAdmittedWholeWithinQuota(t *testing.T) {
	t.Parallel()
	l := NewLedger()
	l.SetQuotas(map[string]Quota{"a": quotaOf(2, false, false)})
	gang := claim("a", "gang", cpus(3), 0)
	if got := l.Admit("e", cpus(8), []Claim{gang}); got[0].Admitted || got[0].Quota == "" {
		t.Errorf("a gang of 3 cpus under a quota of 2 = %+v; want it waiting whole, for its quota", got[0])
	}
	if u := l.Used(); u != (Request{}) {
		t.Errorf("used %v; want nothing taken for a part of the gang", u)
	}
	elastic := claim("a", "elastic", cpus(3), 0)
	elastic.Step, elastic.Steps = cpu1, 2
	if got := l.Admit("e", cpus(8), []Claim{elastic}); !got[0].Admitted || got[0].Steps != 1 {
		t.Errorf("an elastic gang of 1 to 3 cpus = %+v; want admitted with 2, all its quota allows", got[0])
	}
	if l.Resize(cpus(8), elastic.Sized(0)) {
		t.Error("the elastic gang grew to 3 cpus past its quota of 2")
	}
}

func TestATaskBeyondItsWholeQuotaSaysItCannotStart(t *testing.T) {
	t.Parallel()
	l := NewLedger()
	l.SetQuotas(map[string]Quota{"tiny": {Nominal: Request{500, Unlimited, Unlimited}, Weight: 1}})
	got := l.Admit("e", cpus(4), []Claim{claim("tiny", "big", cpu1, 0)})
	want := "this task needs cpu 1, more than project tiny's whole quota of cpu 500m, which it may not borrow beyond"
	if got[0].Admitted || !strings.HasPrefix(got[0].Quota, want) {
		t.Errorf("a task of 1 cpu under a quota of 500m, no borrowing = %+v; want it waiting with %q", got[0], want)
	}
}
