package local

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/resource/pooltest"
)

// The supervisor's ledger is the pool every engine on a home shares: each
// pool here is a backend of its own, one engine's connection.
func TestPoolConformance(t *testing.T) {
	t.Parallel()
	pooltest.Run(t, func(t *testing.T, capacity resource.Request, n int) []pooltest.Pool {
		home := t.TempDir()
		out := make([]pooltest.Pool, n)
		backends := make([]*Backend, n)
		ctx, cancel := context.WithCancel(context.Background())
		var watchers sync.WaitGroup
		for i := range out {
			backends[i] = New(Config{Home: home, SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + home, os.Args[0]}})
			out[i] = backends[i].Pool(capacity)
			b := backends[i]
			watchers.Go(func() { b.Watch(ctx, func(job.AttemptID, job.Status) {}, func() {}) }) // as the engine does: it carries word of grants
		}
		t.Cleanup(func() {
			cancel()
			for _, b := range backends {
				b.Close()
			}
			watchers.Wait() // a watcher still calling could start another supervisor in the home being removed
			killSupervisor(home)
		})
		return out
	})
}

// Room handed from an ended attempt to a new one goes back to the shared
// ledger only when the new attempt starts and holds its own: a second
// engine never fits in between.
func TestHandedRoomMovesWhenTheNewAttemptStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cpu1 := resource.Request{MilliCPU: 1000}
	mine, other := h.b.Pool(cpu1), h.sibling(t).Pool(cpu1)
	claim := func(holder string) resource.Claim {
		return resource.Claim{Holder: holder, Waiter: holder + "-node", Request: cpu1}
	}
	admitted := func(p *Pool, holder string) bool {
		t.Helper()
		res, err := p.Admit(t.Context(), nil, []resource.Claim{claim(holder)})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Admitted
	}
	if res, err := mine.Admit(t.Context(), nil, []resource.Claim{claim("r/old/1")}); err != nil || !res[0].Admitted {
		t.Fatalf("Admit = %+v, %v", res, err)
	}
	h.waitExit(t, h.launch(t, "r/old/1", "true"))
	if handed, err := mine.HandOver(t.Context(), claim("r/new/1"), []string{"r/old/1"}); err != nil || !handed {
		t.Fatalf("HandOver = %v, %v", handed, err)
	}
	if admitted(other, "theirs/1") {
		t.Fatal("another engine was admitted into room handed over to a new attempt")
	}
	spec := h.launch(t, "r/new/1", "sleep", "0.3")
	if admitted(other, "theirs/1") {
		t.Fatal("another engine was admitted while the new attempt runs")
	}
	h.waitExit(t, spec)
	if err := mine.Release(t.Context(), "r/new/1"); err != nil {
		t.Fatal(err)
	}
	if !admitted(other, "theirs/1") {
		t.Error("the room never came back after the new attempt ended")
	}
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if len(h.b.room)+len(h.b.handover) != 0 {
		t.Errorf("the engine still remembers %v and hand-overs %v after every attempt was released", h.b.room, h.b.handover)
	}
}

// An attempt stopped before its launch arrived holds nothing when the
// launch comes late, and the room it was handed goes back.
func TestAttemptStoppedBeforeItStartsHoldsNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cpu1 := resource.Request{MilliCPU: 1000}
	mine, other := h.b.Pool(cpu1), h.sibling(t).Pool(cpu1)
	c := resource.Claim{Holder: "r/old/1", Waiter: "r/old", Request: cpu1}
	if res, err := mine.Admit(t.Context(), nil, []resource.Claim{c}); err != nil || !res[0].Admitted {
		t.Fatalf("Admit = %+v, %v", res, err)
	}
	h.waitExit(t, h.launch(t, "r/old/1", "true"))
	next := resource.Claim{Holder: "r/new/1", Waiter: "r/new", Request: cpu1}
	if handed, err := mine.HandOver(t.Context(), next, []string{"r/old/1"}); err != nil || !handed {
		t.Fatalf("HandOver = %v, %v", handed, err)
	}
	if err := h.b.Abort(t.Context(), mustID(t, "r/new/1"), time.Second); err != nil {
		t.Fatal(err)
	}
	h.launch(t, "r/new/1", "sleep", "5")
	res, err := other.Admit(t.Context(), nil, []resource.Claim{{Holder: "theirs/1", Waiter: "theirs", Request: cpu1}})
	if err != nil || !res[0].Admitted {
		t.Errorf("after a late launch of a stopped attempt, another engine's claim = %+v, %v; want admitted", res, err)
	}
}

// sibling is a second engine's backend on h's home.
func (h *harness) sibling(t *testing.T) *Backend {
	b := New(Config{Home: h.home, SupervisorCommand: h.b.cfg.SupervisorCommand})
	t.Cleanup(func() { b.Close() })
	return b
}

// An engine learns at once, through its watcher, that another engine's
// node waits, and then hands no room over without asking.
func TestAnotherEngineWaitingStopsHandOvers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cpu1 := resource.Request{MilliCPU: 1000}
	mine, other := h.b.Pool(cpu1), h.sibling(t).Pool(cpu1)
	if res, err := mine.Admit(t.Context(), nil, []resource.Claim{{Holder: "r/a/1", Waiter: "r/a", Request: cpu1}}); err != nil || !res[0].Admitted || res[0].Contended {
		t.Fatalf("Admit = %+v, %v; want admitted, uncontended", res, err)
	}
	if res, err := other.Admit(t.Context(), nil, []resource.Claim{{Holder: "s/x/1", Waiter: "s/x", Request: cpu1, Priority: 9}}); err != nil || res[0].Admitted {
		t.Fatalf("other engine's Admit = %+v, %v; want waiting", res, err)
	}
	for deadline := time.Now().Add(3 * time.Second); h.b.alone.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("the engine's watcher never learned that another engine waits")
		}
		runtimeGosched()
	}
	if handed, err := mine.HandOver(t.Context(), resource.Claim{Holder: "r/b/1", Waiter: "r/b", Request: cpu1}, []string{"r/a/1"}); err != nil || handed {
		t.Errorf("HandOver while another engine waits = %v, %v; want refused", handed, err)
	}
}
