package resource

import (
	"slices"
	"testing"
)

func TestLedgerGivesExitedRoomBackThroughItsEngine(t *testing.T) {
	t.Parallel()

	cpu := Request{MilliCPU: 1000}
	cases := map[string]struct {
		steps    func(l *Ledger)
		wantUsed Request
	}{
		"an exited attempt keeps its room until its engine releases it": {
			steps:    func(l *Ledger) { l.Hold("e1", Claim{Holder: "a", Request: cpu}); l.Bind("a"); l.Exited("a") },
			wantUsed: cpu,
		},
		"its engine's release gives it back": {
			steps: func(l *Ledger) {
				l.Hold("e1", Claim{Holder: "a", Request: cpu})
				l.Bind("a")
				l.Exited("a")
				l.Release("a")
			},
		},
		"an attempt whose engine is gone gives its room back when it exits": {
			steps: func(l *Ledger) {
				l.Hold("e1", Claim{Holder: "a", Request: cpu})
				l.Bind("a")
				l.EndSession("e1")
				l.Exited("a")
			},
		},
		"a running attempt keeps its room when its engine goes": {
			steps:    func(l *Ledger) { l.Hold("e1", Claim{Holder: "a", Request: cpu}); l.Bind("a"); l.EndSession("e1") },
			wantUsed: cpu,
		},
		"an engine that goes gives back what exited and what never started": {
			steps: func(l *Ledger) {
				l.Hold("e1", Claim{Holder: "a", Request: cpu})
				l.Bind("a")
				l.Exited("a")
				l.Admit("e1", Request{MilliCPU: 4000}, []Claim{{Holder: "b", Waiter: "nb", Request: cpu}})
				l.EndSession("e1")
			},
		},
		"an engine that adopts a running attempt takes over its room": {
			steps: func(l *Ledger) {
				l.Hold("e1", Claim{Holder: "a", Request: cpu})
				l.Bind("a")
				l.EndSession("e1")
				l.Hold("e2", Claim{Holder: "a", Request: cpu})
				l.Exited("a")
			},
			wantUsed: cpu,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := NewLedger()
			tc.steps(l)
			if got := l.Used(); got != tc.wantUsed {
				t.Errorf("used = %s, want %s", got, tc.wantUsed)
			}
		})
	}
}

func TestLedgerGrantsRoomToTheFirstWaiters(t *testing.T) {
	t.Parallel()

	cpu1, cpu2 := Request{MilliCPU: 1000}, Request{MilliCPU: 2000}
	wait := func(t *testing.T, l *Ledger, session, node string, req Request, prio int32) {
		t.Helper()
		got := l.Admit(session, cpu2, []Claim{{Holder: node + "/1", Waiter: node, Request: req, Priority: prio}})
		if got[0].Admitted {
			t.Fatalf("%s was admitted, want it waiting", node)
		}
	}
	full := func(l *Ledger) {
		l.Hold("e1", Claim{Holder: "a", Request: cpu1})
		l.Hold("e1", Claim{Holder: "b", Request: cpu1})
	}
	cases := map[string]struct {
		steps       func(t *testing.T, l *Ledger)
		wantUsed    Request
		wantWaiting []string
	}{
		"waiters queue by priority, then first come, and keep their place when asked about again": {
			steps: func(t *testing.T, l *Ledger) {
				full(l)
				wait(t, l, "e1", "n1", cpu1, 0)
				wait(t, l, "e2", "n2", cpu1, 0)
				wait(t, l, "e1", "n3", cpu1, 5)
				wait(t, l, "e1", "n1", cpu1, 0)
			},
			wantUsed:    cpu2,
			wantWaiting: []string{"n3", "n1", "n2"},
		},
		"released room is granted to the first waiter, whatever its engine": {
			steps: func(t *testing.T, l *Ledger) {
				full(l)
				wait(t, l, "e2", "n2", cpu1, 0)
				wait(t, l, "e1", "n1", cpu1, 0)
				l.Release("a")
			},
			wantUsed:    cpu2,
			wantWaiting: []string{"n1"},
		},
		"a waiter that does not fit holds lower priorities back": {
			steps: func(t *testing.T, l *Ledger) {
				full(l)
				wait(t, l, "e1", "big", cpu2, 5)
				wait(t, l, "e2", "low", cpu1, 0)
				l.Release("a")
			},
			wantUsed:    cpu1,
			wantWaiting: []string{"big", "low"},
		},
		"room granted to a waiter that is withdrawn goes back": {
			steps: func(t *testing.T, l *Ledger) {
				full(l)
				wait(t, l, "e2", "n2", cpu1, 0)
				l.Release("a", "b")
				l.Withdraw("n2")
			},
		},
		"room granted to an engine that ends goes back": {
			steps: func(t *testing.T, l *Ledger) {
				full(l)
				wait(t, l, "e2", "n2", cpu1, 0)
				l.Release("a", "b")
				l.EndSession("e2")
			},
		},
		"room granted for one attempt goes back when the node asks for another": {
			steps: func(t *testing.T, l *Ledger) {
				full(l)
				wait(t, l, "e2", "n2", cpu1, 0)
				l.Release("a", "b")
				if got := l.Admit("e2", cpu2, []Claim{{Holder: "n2/2", Waiter: "n2", Request: cpu1}}); !got[0].Admitted {
					t.Error("the node's next attempt was not admitted into free room")
				}
				l.Release("n2/2")
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := NewLedger()
			tc.steps(t, l)
			if got := l.Used(); got != tc.wantUsed {
				t.Errorf("used = %s, want %s", got, tc.wantUsed)
			}
			if got := l.Waiting(); !slices.Equal(got, tc.wantWaiting) && len(got)+len(tc.wantWaiting) > 0 {
				t.Errorf("waiting = %v, want %v", got, tc.wantWaiting)
			}
		})
	}
}
