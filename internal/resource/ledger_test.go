package resource

import "testing"

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
