package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// rerunParams is a rerun of run src with tasks a, b and c: a reused, b
// to run, c left out.
func rerunParams(id, src apiv1.RunID) store.CreateRunParams {
	p := NewRun(id, "me")
	p.Nodes = []string{"a", "b", "c"}
	p.Kinds = []apiv1.NodeKind{apiv1.NodeKindCommand, apiv1.NodeKindCommand, apiv1.NodeKindMap}
	p.Run.RerunOf = &apiv1.RerunOf{Run: src, Mode: apiv1.RerunUntil, Node: "b"}
	p.Preset = []apiv1.NodeStatus{
		{
			Name: "a", Phase: apiv1.PhaseSucceeded, Kind: apiv1.NodeKindCommand, Message: "reused from " + string(src),
			Outputs: map[string]string{"x": "1"}, Reused: &apiv1.Reused{Run: src, Node: "a", Attempt: 2},
		},
		{Name: "c", Phase: apiv1.PhaseSkipped, Kind: apiv1.NodeKindMap, Message: "not run: not part of this rerun"},
	}
	return p
}

func testPresetNodes(t *testing.T, s store.Store) {
	p := rerunParams("r2", "r1")
	mustCreate(t, s, p)
	got := get(t, s, "r2")
	want := p.Run
	want.Project = "default"
	want.Status = apiv1.RunStatus{Phase: apiv1.PhasePending, Nodes: []apiv1.NodeStatus{
		p.Preset[0], {Name: "b", Phase: apiv1.PhasePending, Kind: apiv1.NodeKindCommand}, p.Preset[1],
	}, Progress: &apiv1.RunProgress{Total: 3, Done: 2, Succeeded: 1, Skipped: 1}} // the preset nodes are done
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("GetRun of a rerun (-want +got):\n%s", diff)
	}
	events, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r2"})
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	for _, e := range events[1:] {
		told = append(told, e.Node+" "+e.Reason)
	}
	if len(events) != 3 || strings.Join(told, ", ") != "a Reused, c NotInRerun" {
		t.Errorf("a rerun's first events tell %q after %d events; want a Reused, c NotInRerun after the submission", told, len(events))
	}
	if plain := get(t, s, mustPlain(t, s)); plain.RerunOf != nil || plain.Status.Nodes[0].Reused != nil {
		t.Errorf("a plain run reads back RerunOf %+v, node a reused %+v; want neither", plain.RerunOf, plain.Status.Nodes[0].Reused)
	}
	bad := rerunParams("r3", "r1")
	bad.Preset = append(bad.Preset, apiv1.NodeStatus{Name: "zz", Phase: apiv1.PhaseSkipped})
	if err := s.CreateRun(t.Context(), bad); err == nil {
		t.Error("CreateRun with a preset node that is not one of its nodes succeeded; want an error")
	}
	if _, err := s.GetRun(t.Context(), "r3"); err == nil {
		t.Error("the refused run was saved in part")
	}
}

// mustPlain creates a run without presets and returns its ID.
func mustPlain(t *testing.T, s store.Store) apiv1.RunID {
	t.Helper()
	mustCreate(t, s, NewRun("plain", "me"))
	return "plain"
}

func testRetryKeepsPresetNodes(t *testing.T, s store.Store) {
	mustCreate(t, s, rerunParams("r2", "r1"))
	apply(t, s, &store.Change{
		Run: "r2", Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed, Code: apiv1.CodeExit, FinishedAt: &t0},
		Nodes: []apiv1.NodeStatus{{Name: "b", Phase: apiv1.PhaseFailed, Code: apiv1.CodeExit, FinishedAt: &t0}},
	})
	if err := s.RetryRun(t.Context(), "r2", store.Retry{Owner: "me", Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	run := get(t, s, "r2")
	var phases []apiv1.Phase
	for _, n := range run.Status.Nodes {
		phases = append(phases, n.Phase)
	}
	want := []apiv1.Phase{apiv1.PhaseSucceeded, apiv1.PhasePending, apiv1.PhaseSkipped}
	if diff := cmp.Diff(want, phases); diff != "" || run.Status.Nodes[0].Reused == nil || run.RerunOf == nil {
		t.Errorf("after RetryRun of a rerun: phases (-want +got):\n%s\na reused %+v, rerunOf %+v; want a kept reused, c left out, b Pending",
			diff, run.Status.Nodes[0].Reused, run.RerunOf)
	}
}

// testRerunKeepsItsSource: a run that a rerun which has not ended reuses
// results of is not deleted (ErrInUse, naming the rerun); a run whose
// ID only starts the same is; once the rerun ends, the source goes too.
func testRerunKeepsItsSource(t *testing.T, s store.Store) {
	finish(t, s, mustCreateRun(t, s, "src"), apiv1.PhaseSucceeded)
	finish(t, s, mustCreateRun(t, s, "src-2"), apiv1.PhaseSucceeded)
	mustCreate(t, s, rerunParams("re", "src"))
	var inUse *store.InUseError
	if err := s.DeleteRun(t.Context(), "src"); !errors.As(err, &inUse) || !errors.Is(err, store.ErrInUse) || len(inUse.Readers) != 1 || inUse.Readers[0] != "re" {
		t.Fatalf("DeleteRun(a rerun's source) = %v, want ErrInUse naming the rerun", err)
	}
	if r, err := s.Readers(t.Context(), "src"); err != nil || len(r) != 1 || r[0] != "re" {
		t.Errorf("Readers(src) = %v, %v; want [re]", r, err)
	}
	if err := s.DeleteRun(t.Context(), "src-2"); err != nil {
		t.Errorf("DeleteRun(src-2), which no rerun reads = %v", err)
	}
	finish(t, s, "re", apiv1.PhaseSucceeded)
	if r, err := s.Readers(t.Context(), "src"); err != nil || len(r) != 0 {
		t.Errorf("Readers(src) once the rerun ended = %v, %v; want none", r, err)
	}
	if err := s.DeleteRun(t.Context(), "src"); err != nil {
		t.Errorf("DeleteRun(src) once the rerun ended = %v", err)
	}
}

// mustCreateRun creates a plain run id and returns its ID.
func mustCreateRun(t *testing.T, s store.Store, id apiv1.RunID) apiv1.RunID {
	t.Helper()
	mustCreate(t, s, NewRun(id, "me"))
	return id
}
