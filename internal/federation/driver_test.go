package federation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// fakeParty answers as a party's server would, from a script: whether it
// admits shares, how its shares end, whether it answers at all. It
// records every order it takes.
type fakeParty struct {
	mu      sync.Mutex
	name    string
	admit   bool   // reservations are held (else they wait)
	never   bool   // reservations can never fit
	outcome string // state a started share ends in
	down    bool   // calls fail as if the server were gone
	orders  []string
	state   map[string]apiv1.ShareStatus
}

func newFake(name string) *fakeParty {
	return &fakeParty{name: name, admit: true, outcome: apiv1.ShareSucceeded, state: map[string]apiv1.ShareStatus{}}
}

var errDown = errors.New("connection refused")

func (f *fakeParty) CreatePart(context.Context, apiv1.PartRequest) (apiv1.PartStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return apiv1.PartStatus{}, errDown
	}
	return apiv1.PartStatus{Party: f.name}, nil
}

func (f *fakeParty) PartStatus(context.Context, apiv1.RunID) (apiv1.PartStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return apiv1.PartStatus{}, errDown
	}
	out := apiv1.PartStatus{Party: f.name, Shares: map[string]apiv1.ShareStatus{}}
	for task, st := range f.state {
		if st.State == apiv1.ShareRunning || st.State == apiv1.ShareReserved && st.Message == "starting" {
			st.State = f.outcome // a started share ends at the next look
			f.state[task] = st
		}
		out.Shares[task] = st
	}
	return out, nil
}

func (f *fakeParty) OrderShare(_ context.Context, _ apiv1.RunID, task string, o apiv1.ShareOrder) (apiv1.ShareStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return apiv1.ShareStatus{}, errDown
	}
	f.orders = append(f.orders, o.Action)
	st := apiv1.ShareStatus{Task: task, Attempt: o.Attempt, Address: f.name + ":1"}
	switch {
	case o.Action == apiv1.OrderReserve && f.never:
		st.State, st.Code, st.Message = apiv1.ShareFailed, apiv1.CodeShareNeverFits, "needs 8 cpu; holds 2"
	case o.Action == apiv1.OrderReserve && f.admit:
		st.State = apiv1.ShareReserved
	case o.Action == apiv1.OrderReserve:
		st.State, st.Message = apiv1.ShareReserving, "waiting for resources: needs 1 cpu"
	case o.Action == apiv1.OrderStart:
		st.State, st.Message = apiv1.ShareRunning, ""
	default:
		st.State = apiv1.ShareReleased
	}
	f.state[task] = st
	return st, nil
}

func (f *fakeParty) StopPart(context.Context, apiv1.RunID, string) error { return nil }

func (f *fakeParty) CheckPart(context.Context, apiv1.PartRequest) error { return nil }

func (f *fakeParty) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.orders)
}

type fakeDir map[string]*fakeParty

func (d fakeDir) Party(_ context.Context, name string) (Party, error) {
	if p, ok := d[name]; ok {
		return p, nil
	}
	return nil, &apiv1.Error{Code: apiv1.CodePartRefused, Message: name + " is not registered"}
}

type fakeRuns struct{}

func (fakeRuns) GetRun(_ context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	return &apiv1.Run{ID: id, Workflow: &apiv1.Workflow{}, Federation: &apiv1.FederationInfo{Initiator: "alice"}}, nil
}

// attempt drives one federated attempt over dir and returns its end.
func attempt(t *testing.T, dir fakeDir, admission, party time.Duration) job.Status {
	t.Helper()
	c := NewCoordinator(dir, fakeRuns{}, slog.New(slog.DiscardHandler))
	c.Poll = 10 * time.Millisecond
	ended := make(chan job.Status, 1)
	c.watch(t.Context(), func(_ job.AttemptID, st job.Status) { ended <- st })
	spec := &job.Spec{ID: job.AttemptID{Run: "r", Node: "sum", Number: 1}, Federated: &job.Federated{
		Task: "sum", AdmissionTimeout: admission, PartyTimeout: party,
		Shares: []job.Share{{Party: "alice", Role: "guest", Name: "sum"}, {Party: "bob", Role: "host", Name: "sum"}, {Party: "carol", Role: "arbiter", Name: "sum"}},
	}}
	c.launch(spec)
	select {
	case st := <-ended:
		return st
	case <-time.After(20 * time.Second):
		t.Fatal("the attempt never ended")
	}
	return job.Status{}
}

func parties() fakeDir {
	return fakeDir{"alice": newFake("alice"), "bob": newFake("bob"), "carol": newFake("carol")}
}

func TestAttemptStartsEveryShareOnlyOnceAllAreReserved(t *testing.T) {
	t.Parallel()
	dir := parties()
	st := attempt(t, dir, time.Second, time.Second)
	if !st.Succeeded() {
		t.Fatalf("attempt ended %+v; want every share succeeded", st)
	}
	for name, p := range dir {
		if got := p.took(); !slices.Equal(got, []string{"reserve", "start"}) {
			t.Errorf("%s took orders %v; want reserve then start", name, got)
		}
	}
}

func TestAPartyThatCanNeverAdmitFailsTheAttemptAtOnceAndNothingIsHeld(t *testing.T) {
	t.Parallel()
	dir := parties()
	dir["carol"].never = true
	st := attempt(t, dir, time.Minute, time.Minute) // the code tells a fast refusal from the admission timeout
	if st.Code != string(apiv1.CodeShareNeverFits) || !strings.Contains(st.Message, "party carol") || !st.Permanent {
		t.Fatalf("attempt ended %+v; want a permanent KLN-7010 naming carol", st)
	}
	for name, p := range dir {
		got := p.took()
		if slices.Contains(got, "start") || got[len(got)-1] != "release" {
			t.Errorf("%s took orders %v; want no start and a release last", name, got)
		}
	}
}

func TestAPartyShortOfRoomPastTheAdmissionTimeoutGivesEveryReservationBack(t *testing.T) {
	t.Parallel()
	dir := parties()
	dir["bob"].admit = false
	st := attempt(t, dir, 200*time.Millisecond, time.Minute)
	if st.Code != string(apiv1.CodeFederatedAdmission) || !strings.Contains(st.Message, "party bob") || !strings.Contains(st.Message, "waiting for resources") {
		t.Fatalf("attempt ended %+v; want KLN-7011 naming bob and what it lacked", st)
	}
	for name, p := range dir {
		got := p.took()
		if slices.Contains(got, "start") || got[len(got)-1] != "release" {
			t.Errorf("%s took orders %v; want no start and a release last", name, got)
		}
	}
}

func TestAShareThatFailsStopsTheOthersAndNamesItsParty(t *testing.T) {
	t.Parallel()
	dir := parties()
	dir["bob"].outcome = apiv1.ShareFailed
	st := attempt(t, dir, time.Second, time.Second)
	if st.Code != string(apiv1.CodeShareFailed) || !strings.Contains(st.Message, "party bob") {
		t.Fatalf("attempt ended %+v; want KLN-7013 naming bob", st)
	}
}

func TestAPartyGoneLongerThanThePartyTimeoutFailsTheAttempt(t *testing.T) {
	t.Parallel()
	dir := parties()
	dir["carol"].down = true
	st := attempt(t, dir, time.Minute, 300*time.Millisecond)
	if st.Code != string(apiv1.CodePartyLost) || !strings.Contains(st.Message, "party carol") {
		t.Fatalf("attempt ended %+v; want KLN-7012 naming carol", st)
	}
	for _, name := range []string{"alice", "bob"} {
		if got := dir[name].took(); slices.Contains(got, "start") {
			t.Errorf("%s took orders %v; want none started while carol was gone", name, got)
		}
	}
}

func TestAnUnregisteredPartyIsRefusedBeforeAnything(t *testing.T) {
	t.Parallel()
	dir := parties()
	delete(dir, "carol")
	st := attempt(t, dir, time.Second, time.Second)
	if st.Code != string(apiv1.CodePartRefused) || !strings.Contains(st.Message, "carol") {
		t.Fatalf("attempt ended %+v; want KLN-7015 naming carol", st)
	}
	for name, p := range dir {
		if got := p.took(); len(got) != 0 {
			t.Errorf("%s took orders %v; want none", name, got)
		}
	}
	_ = fmt.Sprint()
}
