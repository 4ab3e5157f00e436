// Package pooltest is the conformance suite of controller.Pool, where an
// engine's attempts take their room. resource.Pool (one process) and the
// local backend's pool (the supervisor's ledger, shared by every engine
// on a home) both pass it.
package pooltest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"kiln.dev/kiln/internal/controller"
	"kiln.dev/kiln/internal/resource"
)

// Pool is what the suite asks of a pool: the engine's seam, word of room
// granted, and an end.
type Pool interface {
	controller.Pool
	controller.Granter
	// Close ends the engine's session with the pool.
	Close() error
}

// NewFunc returns n pools of one machine (n engines on one home), each of
// the given capacity, sharing one book. It arranges cleanup with t.Cleanup.
type NewFunc func(t *testing.T, capacity resource.Request, n int) []Pool

var (
	cpu1 = resource.Request{MilliCPU: 1000}
	cpu2 = resource.Request{MilliCPU: 2000}
)

// Run runs the suite.
func Run(t *testing.T, newPools NewFunc) {
	t.Helper()
	t.Run("admits what fits and queues the rest", func(t *testing.T) { t.Parallel(); testFits(t, newPools) })
	t.Run("a higher priority that waits holds lower ones back", func(t *testing.T) { t.Parallel(); testPriority(t, newPools) })
	t.Run("equal priorities backfill", func(t *testing.T) { t.Parallel(); testBackfill(t, newPools) })
	t.Run("two engines never oversubscribe the machine", func(t *testing.T) { t.Parallel(); testTwoEngines(t, newPools) })
	t.Run("hold and release are idempotent", func(t *testing.T) { t.Parallel(); testHold(t, newPools) })
	t.Run("a closed engine's waiters and unstarted room are freed", func(t *testing.T) { t.Parallel(); testClose(t, newPools) })
	t.Run("room handed over from an ended attempt is held until its new holder's release", func(t *testing.T) { t.Parallel(); testHandover(t, newPools) })
	t.Run("answers say whether another engine waits, and a hand-over then is refused", func(t *testing.T) { t.Parallel(); testContended(t, newPools) })
	t.Run("room that comes back goes to the node that waited first, across engines", func(t *testing.T) { t.Parallel(); testFirstCome(t, newPools) })
	t.Run("quotas bind every engine, and answers carry their reasons and victims", func(t *testing.T) { t.Parallel(); testQuotas(t, newPools) })
}

func testFirstCome(t *testing.T, newPools NewFunc) {
	pools := newPools(t, cpu1, 2)
	mine, theirs := pools[0], pools[1]
	admit(t, mine, claim("a", cpu1, 0))
	granted := theirs.Granted()
	if got := admit(t, theirs, claim("x", cpu1, 0)); got[0] {
		t.Fatal("admitted into a full pool")
	}
	if got := admit(t, mine, claim("y", cpu1, 0)); got[0] {
		t.Fatal("admitted into a full pool")
	}
	if err := mine.Release(t.Context(), "a/1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-granted:
	case <-time.After(10 * time.Second):
		t.Fatal("the engine whose node waited first was not told that room was granted to it")
	}
	res, err := mine.Admit(t.Context(), nil, []resource.Claim{claim("y", cpu1, 0)})
	if err != nil || res[0].Admitted {
		t.Fatalf("my later node = %+v, %v; want it to wait behind the other engine's earlier one", res, err)
	}
	res, err = theirs.Admit(t.Context(), nil, []resource.Claim{claim("x", cpu1, 0)})
	if err != nil || !res[0].Admitted || res[0].Granted != 0 {
		t.Fatalf("the node that waited first = %+v, %v; want admitted into the room granted to it, nothing more granted", res, err)
	}
}

func testHandover(t *testing.T, newPools NewFunc) {
	pools := newPools(t, cpu2, 2)
	mine, theirs := pools[0], pools[1]
	admit(t, mine, claim("old", cpu2, 0))
	if handed, err := mine.HandOver(t.Context(), claim("next", cpu2, 0), []string{"old/1"}); err != nil || !handed {
		t.Fatalf("HandOver with nothing else waiting = %v, %v; want handed over", handed, err)
	}
	if got := admit(t, theirs, claim("other", cpu1, 0)); got[0] {
		t.Fatal("another engine was admitted into room handed over to a new attempt")
	}
	if err := mine.Release(t.Context(), "next/1"); err != nil {
		t.Fatal(err)
	}
	if got := admit(t, theirs, claim("other", cpu2, 0)); !got[0] {
		t.Error("the handed-over room did not go back with the release of its new holder")
	}
}

func testContended(t *testing.T, newPools NewFunc) {
	pools := newPools(t, cpu1, 2)
	mine, theirs := pools[0], pools[1]
	admit(t, mine, claim("a", cpu1, 0))
	res, err := mine.Admit(t.Context(), nil, []resource.Claim{claim("b", cpu1, 0)})
	if err != nil || res[0].Admitted || res[0].Contended {
		t.Fatalf("only my own node waiting = %+v, %v; want waiting, uncontended", res, err)
	}
	res, err = theirs.Admit(t.Context(), nil, []resource.Claim{claim("x", cpu1, 0)})
	if err != nil || res[0].Admitted || !res[0].Contended {
		t.Fatalf("another engine's node waiting = %+v, %v; want waiting, contended", res, err)
	}
	res, err = mine.Admit(t.Context(), nil, []resource.Claim{claim("c", cpu1, 0)})
	if err != nil || !res[0].Contended {
		t.Fatalf("mine, with another engine's node waiting = %+v, %v; want contended", res, err)
	}
	if handed, err := mine.HandOver(t.Context(), claim("b", cpu1, 0), []string{"a/1"}); err != nil || handed {
		t.Fatalf("HandOver while another engine waits = %v, %v; want refused", handed, err)
	}
	if err := mine.Release(t.Context(), "a/1"); err != nil {
		t.Fatal(err)
	}
	res, err = mine.Admit(t.Context(), nil, []resource.Claim{claim("b", cpu1, 0)})
	if err != nil || !res[0].Admitted {
		t.Errorf("after a refused hand-over and a release, the node that waited first = %+v, %v; want admitted", res, err)
	}
}

func admit(t *testing.T, p Pool, claims ...resource.Claim) []bool {
	t.Helper()
	got, err := p.Admit(t.Context(), nil, claims)
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	if len(got) != len(claims) {
		t.Fatalf("Admit answered %d claims, want %d", len(got), len(claims))
	}
	out := make([]bool, len(got))
	for i, a := range got {
		out[i] = a.Admitted
	}
	return out
}

func claim(holder string, r resource.Request, prio int32) resource.Claim {
	return resource.Claim{Holder: holder + "/1", Waiter: holder, Request: r, Priority: prio}
}

func testFits(t *testing.T, newPools NewFunc) {
	p := newPools(t, cpu2, 1)[0]
	if diff := cmp.Diff(cpu2, p.Capacity()); diff != "" {
		t.Errorf("Capacity (-want +got):\n%s", diff)
	}
	got := admit(t, p, claim("a", cpu1, 0), claim("b", cpu1, 0), claim("c", cpu1, 0))
	if diff := cmp.Diff([]bool{true, true, false}, got); diff != "" {
		t.Fatalf("two CPUs, three one-CPU claims (-want +got):\n%s", diff)
	}
	res, err := p.Admit(t.Context(), nil, []resource.Claim{claim("c", cpu1, 0)})
	if err != nil || res[0].Admitted || res[0].Free != (resource.Request{}) {
		t.Fatalf("a full pool admitted %+v (%v), want a refusal that says nothing is free", res, err)
	}
	res, err = p.Admit(t.Context(), []string{"a/1"}, []resource.Claim{claim("c", cpu1, 0)})
	if err != nil || !res[0].Admitted {
		t.Fatalf("a claim did not fit after a release in the same call: %+v, %v", res, err)
	}
	if got := admit(t, p, claim("big", resource.Request{MilliCPU: 3000}, 0)); got[0] {
		t.Fatal("a claim larger than the pool was admitted")
	}
}

func testPriority(t *testing.T, newPools NewFunc) {
	p := newPools(t, cpu2, 1)[0]
	if got := admit(t, p, claim("low", cpu1, 0)); !got[0] {
		t.Fatal("first claim refused")
	}
	res, err := p.Admit(t.Context(), nil, []resource.Claim{claim("high", cpu2, 5), claim("low2", cpu1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Admitted || res[0].Outranked {
		t.Errorf("the high-priority claim = %+v, want waiting for room, not outranked", res[0])
	}
	if res[1].Admitted || !res[1].Outranked {
		t.Errorf("a low-priority claim behind a waiting high one = %+v, want outranked", res[1])
	}
	if err := p.Release(t.Context(), "low/1"); err != nil {
		t.Fatal(err)
	}
	if got := admit(t, p, claim("low2", cpu1, 0), claim("high", cpu2, 5)); got[0] || !got[1] {
		t.Errorf("after a release = %v, want the low claim still outranked and the high one admitted", got)
	}
	if err := p.Release(t.Context(), "high/1"); err != nil {
		t.Fatal(err)
	}
	if got := admit(t, p, claim("low2", cpu1, 0)); !got[0] {
		t.Error("the low claim was not admitted once nothing of higher priority waited")
	}
}

func testBackfill(t *testing.T, newPools NewFunc) {
	p := newPools(t, cpu2, 1)[0]
	admit(t, p, claim("running", cpu1, 0))
	got := admit(t, p, claim("gang", cpu2, 0), claim("small", cpu1, 0))
	if diff := cmp.Diff([]bool{false, true}, got); diff != "" {
		t.Errorf("a small claim behind a gang of equal priority (-want +got):\n%s", diff)
	}
	if err := p.Withdraw(t.Context(), "gang"); err != nil {
		t.Fatal(err)
	}
}

func testTwoEngines(t *testing.T, newPools NewFunc) {
	pools := newPools(t, cpu2, 2)
	a, b := pools[0], pools[1]
	if got := admit(t, a, claim("a1", cpu1, 0), claim("a2", cpu1, 0)); !got[0] || !got[1] {
		t.Fatalf("engine A's two claims = %v, want both admitted", got)
	}
	if got := admit(t, b, claim("b1", cpu1, 0)); got[0] {
		t.Fatal("engine B was admitted while engine A holds the whole machine")
	}
	if got := admit(t, a, claim("a3", cpu1, -1)); got[0] {
		t.Fatal("engine A was admitted past a waiter of higher priority in engine B")
	}
	if err := a.Release(t.Context(), "a1/1"); err != nil {
		t.Fatal(err)
	}
	if got := admit(t, b, claim("b1", cpu1, 0)); !got[0] {
		t.Fatal("engine B was not admitted after engine A released")
	}
}

func testHold(t *testing.T, newPools NewFunc) {
	p := newPools(t, cpu2, 1)[0]
	for range 2 {
		if err := p.Hold(t.Context(), []resource.Claim{{Holder: "adopted/1", Request: cpu2}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := admit(t, p, claim("x", cpu1, 0)); got[0] {
		t.Fatal("a claim fit beside an attempt held twice: holding must count once")
	}
	for range 2 {
		if err := p.Release(t.Context(), "adopted/1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := admit(t, p, claim("x", cpu2, 0)); !got[0] {
		t.Fatal("releasing twice did not give back exactly what was held")
	}
	if got := admit(t, p, claim("x", cpu2, 0)); !got[0] {
		t.Fatal("a holder admitted again must be answered yes at no cost")
	}
}

func testClose(t *testing.T, newPools NewFunc) {
	pools := newPools(t, cpu2, 2)
	a, b := pools[0], pools[1]
	admit(t, a, claim("a1", cpu2, 0))
	admit(t, a, claim("a2", cpu1, 9))
	if got := admit(t, b, claim("b1", cpu1, 0)); got[0] {
		t.Fatal("engine B was admitted into a full machine")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, b, claim("b1", cpu2, 0))
}

// waitAdmitted retries a claim until it is admitted: a session ends when
// the pool learns its engine went away, which may take a moment.
func waitAdmitted(t *testing.T, p Pool, c resource.Claim) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	for {
		res, err := p.Admit(ctx, nil, []resource.Claim{c})
		if err == nil && res[0].Admitted {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("claim %s was never admitted after the other engine went away (last answer %+v, %v)", c.Holder, res, err)
		}
		pause(ctx)
	}
}
