package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// fullRun creates run id with an attempt, an expansion, a gate input and
// events, and finishes it as phase.
func fullRun(t *testing.T, s store.Store, id apiv1.RunID, phase apiv1.Phase) {
	t.Helper()
	mustCreate(t, s, NewRun(id, "me"))
	addInput(t, s, id, "a", apiv1.GateInput{Approve: ptr(true), By: "ann", At: t0})
	end := t0.Add(time.Second)
	apply(t, s, &store.Change{
		Run: id, Owner: "me",
		Nodes: []apiv1.NodeStatus{{Name: "a", Phase: apiv1.PhaseSucceeded, Expansion: []byte(`{"items":[1]}`)}},
		Added: []apiv1.NodeStatus{{Name: "a.0", Phase: apiv1.PhaseSucceeded, Parent: "a"}},
		Attempts: []store.AttemptRow{{Node: "a", AttemptStatus: apiv1.AttemptStatus{
			Number: 1, ID: string(id) + "/a/1", Phase: apiv1.PhaseSucceeded, StartedAt: &t0, FinishedAt: &end,
		}}},
		Events: []apiv1.Event{{Node: "a", Attempt: 1, Phase: apiv1.PhaseSucceeded, Reason: "Exited", Time: end}},
	})
	finish(t, s, id, phase)
}

func testDeleteRun(t *testing.T, s store.Store) {
	fullRun(t, s, "gone", apiv1.PhaseSucceeded)
	fullRun(t, s, "kept", apiv1.PhaseFailed)
	before := get(t, s, "kept")
	if err := s.DeleteRun(t.Context(), "gone"); err != nil {
		t.Fatalf("DeleteRun: %v", err)
	}
	if _, err := s.GetRun(t.Context(), "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun(deleted) = %v, want ErrNotFound", err)
	}
	if err := s.DeleteRun(t.Context(), "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second DeleteRun = %v, want ErrNotFound", err)
	}
	if ev, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "gone"}); err != nil || len(ev) != 0 {
		t.Errorf("events of the deleted run = %v, %v; want none", ev, err)
	}
	if in, err := s.GateInputs(t.Context(), "gone"); err != nil || len(in) != 0 {
		t.Errorf("gate inputs of the deleted run = %v, %v; want none", in, err)
	}
	if diff := cmp.Diff(before, get(t, s, "kept")); diff != "" {
		t.Errorf("the other run changed (-before +after):\n%s", diff)
	}
	// The ID can be used again, and nothing of the old run comes back with it.
	mustCreate(t, s, NewRun("gone", "me"))
	again := get(t, s, "gone")
	if len(again.Status.Nodes) != 2 || again.Status.Nodes[0].Expansion != nil || len(again.Status.Nodes[0].Attempts) != 0 {
		t.Errorf("a new run with the deleted run's ID = %+v, want two fresh nodes", again.Status.Nodes)
	}
	if ev, _ := s.ListEvents(t.Context(), store.ListEventsParams{Run: "gone"}); len(ev) != 1 {
		t.Errorf("events of the new run = %+v, want its one Submitted event", ev)
	}
	if in, _ := s.GateInputs(t.Context(), "gone"); len(in) != 0 {
		t.Errorf("gate inputs of the new run = %+v, want none", in)
	}
}

func testDeleteRunRefusals(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("running", "me"))
	err := s.DeleteRun(t.Context(), "running")
	var pe *store.PhaseError
	if !errors.As(err, &pe) || pe.Phase != apiv1.PhasePending {
		t.Errorf("DeleteRun(unfinished) = %v, want a PhaseError saying it is Pending", err)
	}
	get(t, s, "running")
	if err := s.DeleteRun(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteRun(unknown) = %v, want ErrNotFound", err)
	}
	missing, err := s.MissingRuns(t.Context(), []apiv1.RunID{"x", "running", "y"})
	if diff := cmp.Diff([]apiv1.RunID{"x", "y"}, missing); err != nil || diff != "" {
		t.Errorf("MissingRuns = %v, %v; want x and y", missing, err)
	}
}

// lifeRun creates and finishes run id of name at created, its spec saying ttl and history.
func lifeRun(t *testing.T, s store.Store, id apiv1.RunID, name string, created time.Duration, phase apiv1.Phase, ttl *int32, h *apiv1.HistoryLimit) {
	t.Helper()
	p := NewRun(id, "me")
	p.Run.Name, p.Run.CreatedAt = name, t0.Add(created)
	p.Run.Workflow = &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: name}, Spec: apiv1.WorkflowSpec{TTLSecondsAfterFinished: ttl, HistoryLimit: h}}
	mustCreate(t, s, p)
	if phase != "" {
		end := t0.Add(created)
		apply(t, s, &store.Change{Run: id, Owner: "me", Status: &apiv1.RunStatus{Phase: phase, StartedAt: &end, FinishedAt: &end}})
	}
}

func refIDs(refs []store.RunRef) []apiv1.RunID {
	out := []apiv1.RunID{}
	for _, r := range refs {
		out = append(out, r.ID)
	}
	return out
}

func testExpiredRuns(t *testing.T, s store.Store) {
	lifeRun(t, s, "short", "wf", 0, apiv1.PhaseSucceeded, ptr[int32](10), nil)
	lifeRun(t, s, "zero", "wf", time.Second, apiv1.PhaseFailed, ptr[int32](0), nil)
	lifeRun(t, s, "long", "wf", 0, apiv1.PhaseSucceeded, ptr[int32](3600), nil)
	lifeRun(t, s, "forever", "wf", 0, apiv1.PhaseSucceeded, nil, nil)
	lifeRun(t, s, "running", "wf", 0, "", ptr[int32](0), nil)
	for at, want := range map[time.Duration][]apiv1.RunID{
		0:                {},
		time.Second:      {"zero"},
		10 * time.Second: {"zero", "short"},
		2 * time.Hour:    {"zero", "short", "long"},
	} {
		got, err := s.ExpiredRuns(t.Context(), t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, refIDs(got)); diff != "" {
			t.Errorf("ExpiredRuns(t0+%s) (-want +got):\n%s", at, diff)
		}
	}
	got, _ := s.ExpiredRuns(t.Context(), t0.Add(time.Minute))
	want := store.RunRef{ID: "short", Name: "wf", Project: "default", Phase: apiv1.PhaseSucceeded, FinishedAt: t0, TTL: 10 * time.Second}
	if len(got) != 2 || got[1] != want {
		t.Errorf("ExpiredRuns = %+v, want short as %+v", got, want)
	}
}

func testRunsOverHistory(t *testing.T, s store.Store) {
	two := &apiv1.HistoryLimit{Succeeded: ptr[int32](2), Failed: ptr[int32](1)}
	for i := range 4 {
		lifeRun(t, s, apiv1.RunID(fmt.Sprint("ok", i)), "train", time.Duration(i)*time.Minute, apiv1.PhaseSucceeded, nil, two)
	}
	lifeRun(t, s, "bad0", "train", 10*time.Second, apiv1.PhaseFailed, nil, two)
	lifeRun(t, s, "bad1", "train", 20*time.Second, apiv1.PhaseCancelled, nil, two)
	lifeRun(t, s, "bad2", "train", 30*time.Second, apiv1.PhaseFailed, nil, two)
	lifeRun(t, s, "live", "train", time.Hour, "", nil, &apiv1.HistoryLimit{Succeeded: ptr[int32](0)})
	// Another name, and the same name in another project, have their own histories.
	lifeRun(t, s, "other0", "eval", 0, apiv1.PhaseSucceeded, nil, nil)
	lifeRun(t, s, "other1", "eval", time.Second, apiv1.PhaseSucceeded, nil, nil)
	p := NewRun("vision", "me")
	p.Run.Name, p.Run.Project = "train", "vision"
	mustCreate(t, s, p)
	finish(t, s, "vision", apiv1.PhaseSucceeded)
	got, err := s.RunsOverHistory(t.Context(), store.Unlimited)
	if err != nil {
		t.Fatal(err)
	}
	// Old first within a name; a Cancelled run counts with the failed ones.
	if diff := cmp.Diff([]apiv1.RunID{"ok0", "bad0", "bad1", "ok1"}, refIDs(got)); diff != "" {
		t.Errorf("RunsOverHistory (-want +got):\n%s", diff)
	}
	if len(got) > 0 && (got[0].Keep != 2 || got[1].Keep != 1) {
		t.Errorf("Keep = %d, %d; want 2 for succeeded runs and 1 for failed ones", got[0].Keep, got[1].Keep)
	}
	got, _ = s.RunsOverHistory(t.Context(), store.HistoryLimit{Succeeded: 1, Failed: -1})
	if diff := cmp.Diff([]apiv1.RunID{"other0", "ok0", "bad0", "bad1", "ok1"}, refIDs(got)); diff != "" {
		t.Errorf("RunsOverHistory with a default (-want +got):\n%s", diff)
	}
}
