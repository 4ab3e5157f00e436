package resource

import "testing"

func TestLedgerAdmitsAFlexibleClaimAtTheLargestSizeThatFits(t *testing.T) {
	t.Parallel()

	host := Request{MilliCPU: 1000}
	// Three hosts of one CPU, of which one may be dropped: from 2 to 3 hosts.
	flex := func(holder string) Claim {
		return Claim{Holder: holder, Waiter: "w-" + holder, Request: Request{MilliCPU: 3000}, Step: host, Steps: 1}
	}
	cases := map[string]struct {
		capacity, taken Request
		wantAdmitted    bool
		wantSteps       int
		wantUsed        Request
	}{
		"room for every host takes the claim whole": {
			capacity: Request{MilliCPU: 4000}, wantAdmitted: true, wantUsed: Request{MilliCPU: 3000},
		},
		"room for fewer takes as many as fit, down to the least": {
			capacity: Request{MilliCPU: 4000}, taken: Request{MilliCPU: 1500},
			wantAdmitted: true, wantSteps: 1, wantUsed: Request{MilliCPU: 3500},
		},
		"room for fewer than the least takes nothing": {
			capacity: Request{MilliCPU: 4000}, taken: Request{MilliCPU: 2500}, wantUsed: Request{MilliCPU: 2500},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := NewLedger()
			if tc.taken != (Request{}) {
				l.Hold("e1", Claim{Holder: "other", Request: tc.taken})
			}
			got := l.Admit("e1", tc.capacity, []Claim{flex("a")})[0]
			if got.Admitted != tc.wantAdmitted || got.Steps != tc.wantSteps {
				t.Errorf("admitted %v with %d steps off, want %v with %d", got.Admitted, got.Steps, tc.wantAdmitted, tc.wantSteps)
			}
			if u := l.Used(); u != tc.wantUsed {
				t.Errorf("used = %s, want %s", u, tc.wantUsed)
			}
		})
	}
}

func TestLedgerGrantsAWaitingFlexibleClaimAsMuchAsFits(t *testing.T) {
	t.Parallel()

	l := NewLedger()
	capacity := Request{MilliCPU: 4000}
	l.Hold("e1", Claim{Holder: "x", Request: Request{MilliCPU: 2000}})
	l.Hold("e1", Claim{Holder: "y", Request: Request{MilliCPU: 2000}})
	c := Claim{Holder: "a", Waiter: "wa", Request: Request{MilliCPU: 3000}, Step: Request{MilliCPU: 1000}, Steps: 1}
	if got := l.Admit("e2", capacity, []Claim{c})[0]; got.Admitted {
		t.Fatalf("admitted with nothing free, want it waiting")
	}
	l.Release("x") // 2 free: two of its three hosts fit
	got := l.Admit("e2", capacity, []Claim{c})[0]
	if !got.Admitted || got.Steps != 1 {
		t.Fatalf("granted claim answered %+v, want admitted one host short", got)
	}
	if u := l.Used(); u != capacity {
		t.Errorf("used = %s, want %s", u, capacity)
	}
}

func TestClaimSizedIsWhatWasTaken(t *testing.T) {
	t.Parallel()
	c := Claim{Holder: "a", Request: Request{MilliCPU: 3000, Memory: 3 << 20}, Step: Request{MilliCPU: 1000, Memory: 1 << 20}, Steps: 2}
	got := c.Sized(2)
	want := Claim{Holder: "a", Request: Request{MilliCPU: 1000, Memory: 1 << 20}}
	if got != want {
		t.Errorf("Sized(2) = %+v, want %+v", got, want)
	}
}

func TestLedgerResizesAHolding(t *testing.T) {
	t.Parallel()
	capacity := Request{MilliCPU: 3000}
	at := func(m int64) Claim { return Claim{Holder: "a", Request: Request{MilliCPU: m}} }
	l := NewLedger()
	l.Hold("e1", at(3000))
	waiting := Claim{Holder: "b", Waiter: "wb", Request: Request{MilliCPU: 1000}}
	if got := l.Admit("e2", capacity, []Claim{waiting})[0]; got.Admitted {
		t.Fatal("admitted into a full pool")
	}
	if !l.Resize(capacity, at(2000)) { // a host lost: its room goes to the waiter
		t.Fatal("shrinking was refused")
	}
	if got := l.Admit("e2", capacity, []Claim{waiting})[0]; !got.Admitted {
		t.Errorf("the waiter was not granted the room given back: %+v", got)
	}
	if l.Resize(capacity, at(3000)) { // no room to grow back
		t.Error("grew into room another holder has")
	}
	l.Release("b")
	if !l.Resize(capacity, at(3000)) || l.Used() != capacity {
		t.Errorf("did not grow into free room: used %s", l.Used())
	}
	if l.Resize(capacity, Claim{Holder: "nobody", Request: Request{MilliCPU: 1}}) {
		t.Error("resized a holder that holds nothing")
	}
}
