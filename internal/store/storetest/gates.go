package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func ptr[T any](v T) *T { return &v }

func addInput(t *testing.T, s store.Store, id apiv1.RunID, node string, in apiv1.GateInput) {
	t.Helper()
	if err := s.AddGateInput(t.Context(), id, node, in); err != nil {
		t.Fatalf("AddGateInput(%s, %s): %v", id, node, err)
	}
}

func testGateInputs(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	mustCreate(t, s, NewRun("r2", "me"))
	want := []store.GateInputRow{
		{Node: "b", GateInput: apiv1.GateInput{Approve: ptr(false), Reason: "not yet", By: "ann", At: t0.Add(3 * time.Nanosecond)}},
		{Node: "a", GateInput: apiv1.GateInput{Value: ptr(`{"lr": 0.1}`), Reason: "tuned", By: "token ci (editor)", At: t0.Add(time.Second)}},
		{Node: "a", GateInput: apiv1.GateInput{Value: ptr(""), By: "bob", At: t0}},
		{Node: "b", GateInput: apiv1.GateInput{Approve: ptr(true), By: "ann", At: t0.Add(time.Minute)}},
	}
	for _, in := range want {
		addInput(t, s, "r1", in.Node, in.GateInput)
	}
	addInput(t, s, "r2", "a", apiv1.GateInput{Approve: ptr(true), At: t0})
	got, err := s.GateInputs(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first is the order they were added in, not the order of At.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GateInputs(r1) (-want +got):\n%s", diff)
	}
	if got, err := s.GateInputs(t.Context(), "nope"); err != nil || len(got) != 0 {
		t.Errorf("GateInputs(unknown) = %v, %v; want none", got, err)
	}
}

func testGateInputRefusals(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	mustCreate(t, s, NewRun("done", "me"))
	finish(t, s, "done", apiv1.PhaseFailed)
	in := apiv1.GateInput{Approve: ptr(true), At: t0}
	if err := s.AddGateInput(t.Context(), "nope", "a", in); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AddGateInput(unknown run) = %v, want ErrNotFound", err)
	}
	if err := s.AddGateInput(t.Context(), "r1", "zz", in); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AddGateInput(unknown node) = %v, want ErrNotFound", err)
	}
	err := s.AddGateInput(t.Context(), "done", "a", in)
	var pe *store.PhaseError
	if !errors.Is(err, store.ErrPhase) || !errors.As(err, &pe) || pe.Phase != apiv1.PhaseFailed || pe.Run != "done" {
		t.Errorf("AddGateInput(ended run) = %v, want a PhaseError saying done is Failed", err)
	}
	for _, id := range []apiv1.RunID{"r1", "done"} {
		if got, err := s.GateInputs(t.Context(), id); err != nil || len(got) != 0 {
			t.Errorf("GateInputs(%s) after refusals = %v, %v; want none", id, got, err)
		}
	}
}

// A node's kind and a gate's status are kept with the node; a retry drops the status and the
// inputs of the gates it makes wait again, and keeps those that succeeded.
func testGateStatusAndRetry(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("g1", "me"))
	since, at := t0.Add(time.Second), t0.Add(time.Minute)
	approved := &apiv1.GateStatus{
		Kind: "approve", Message: "ship it?", WaitingSince: &since, WakeAt: &at,
		Decision: "approved", By: "ann", At: &at, Reason: "looks good",
	}
	rejected := &apiv1.GateStatus{
		Kind: "signal", Type: "int", Message: "how many?", WaitingSince: &since,
		Decision: "rejected", Value: "3", By: "bob", At: &at, Reason: "no",
	}
	apply(t, s, &store.Change{Run: "g1", Owner: "me", Nodes: []apiv1.NodeStatus{
		{Name: "a", Phase: apiv1.PhaseSucceeded, Kind: apiv1.NodeKindGate, Gate: approved},
		{Name: "b", Phase: apiv1.PhaseFailed, Code: apiv1.CodeRejected, Kind: apiv1.NodeKindGate, Gate: rejected},
	}})
	addInput(t, s, "g1", "a", apiv1.GateInput{Approve: ptr(true), By: "ann", At: at})
	addInput(t, s, "g1", "b", apiv1.GateInput{Value: ptr("3"), By: "bob", At: at})
	run := get(t, s, "g1")
	if diff := cmp.Diff([]*apiv1.GateStatus{approved, rejected}, []*apiv1.GateStatus{run.Status.Nodes[0].Gate, run.Status.Nodes[1].Gate}); diff != "" {
		t.Errorf("gate statuses (-want +got):\n%s", diff)
	}
	finish(t, s, "g1", apiv1.PhaseFailed)
	if err := s.RetryRun(t.Context(), "g1", store.Retry{Owner: "me", Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	run = get(t, s, "g1")
	if a, b := run.Status.Nodes[0], run.Status.Nodes[1]; a.Kind != apiv1.NodeKindGate || b.Kind != apiv1.NodeKindGate || b.Phase != apiv1.PhasePending {
		t.Errorf("after RetryRun: a is a %q, b a %q in %s; want both gates, kept, and b Pending", a.Kind, b.Kind, b.Phase)
	}
	if diff := cmp.Diff(approved, run.Status.Nodes[0].Gate); diff != "" || run.Status.Nodes[1].Gate != nil {
		t.Errorf("after RetryRun: gates a %+v, b %+v; want a kept (-want +got):\n%s\nand b's dropped", run.Status.Nodes[0].Gate, run.Status.Nodes[1].Gate, diff)
	}
	inputs, err := s.GateInputs(t.Context(), "g1")
	if err != nil || len(inputs) != 1 || inputs[0].Node != "a" {
		t.Errorf("GateInputs after RetryRun = %+v, %v; want only a's", inputs, err)
	}
}
