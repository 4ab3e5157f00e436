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

func apply(t *testing.T, s store.Store, c *store.Change) {
	t.Helper()
	if err := s.Apply(t.Context(), c); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func get(t *testing.T, s store.Store, id apiv1.RunID) *apiv1.Run {
	t.Helper()
	run, err := s.GetRun(t.Context(), id)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	return run
}

func testRunFields(t *testing.T, s store.Store) {
	p := NewRun("r1", "me")
	p.Run.Source, p.Run.WorkDir, p.Run.Project, p.Run.Suspend = "/w/wf.yaml", "/w", "vision", true
	p.Run.Labels = map[string]string{"team": "ml"}
	mustCreate(t, s, p)
	got := get(t, s, "r1")
	want := p.Run
	want.Status = apiv1.RunStatus{Phase: apiv1.PhasePending, Progress: &apiv1.RunProgress{Total: 2}, Nodes: []apiv1.NodeStatus{{Name: "a", Phase: apiv1.PhasePending}, {Name: "b", Phase: apiv1.PhasePending}}}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("GetRun (-want +got):\n%s", diff)
	}
}

func testApplyAttempts(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	two := 0
	end, retry := t0.Add(time.Second), t0.Add(time.Minute)
	failed := apiv1.AttemptStatus{
		Number: 1, ID: "r1/a/1", Phase: apiv1.PhaseFailed, Signal: "SIGKILL", Code: apiv1.CodeAttemptLost,
		Message: "lost", System: true, StartedAt: &t0, FinishedAt: &end,
	}
	running := apiv1.AttemptStatus{Number: 2, ID: "r1/a/2", Phase: apiv1.PhaseRunning, StartedAt: &end, Nodes: 3}
	node := apiv1.NodeStatus{
		Name: "a", Phase: apiv1.PhaseRunning, Code: apiv1.CodeAttemptLost, Message: "retried", StartedAt: &t0, RetryAt: &retry,
		Conditions: []apiv1.Condition{{Type: apiv1.ConditionRunning, Status: "True", Reason: "Started", LastTransitionTime: t0}},
		Replicas:   []apiv1.ReplicaGroupStatus{{Name: "node", Active: 2}},
	}
	apply(t, s, &store.Change{
		Run: "r1", Owner: "me", Nodes: []apiv1.NodeStatus{node},
		Attempts: []store.AttemptRow{{Node: "a", AttemptStatus: failed}, {Node: "a", AttemptStatus: running}},
	})
	running.Phase, running.ExitCode, running.FinishedAt = apiv1.PhaseSucceeded, &two, &retry
	running.Dropped, running.Joined = []string{"node-2"}, 1 // an elastic gang's lost node, and one that joined
	running.LogsLost = map[string]int64{"stdout": 4096}     // what its log could not hold
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Attempts: []store.AttemptRow{{Node: "a", AttemptStatus: running}}})
	got := get(t, s, "r1").Status.Nodes[0]
	node.Attempts = []apiv1.AttemptStatus{failed, running}
	if diff := cmp.Diff(node, got); diff != "" {
		t.Errorf("node a (-want +got):\n%s", diff)
	}
}

func ids(runs []*apiv1.Run) []apiv1.RunID {
	out := []apiv1.RunID{}
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

// finish moves run id, owned by "me", to phase.
func finish(t *testing.T, s store.Store, id apiv1.RunID, phase apiv1.Phase) {
	t.Helper()
	apply(t, s, &store.Change{Run: id, Owner: "me", Status: &apiv1.RunStatus{Phase: phase, StartedAt: &t0, FinishedAt: &t0}})
}

func testListFilters(t *testing.T, s store.Store) {
	for i, name := range []string{"train", "train", "eval"} {
		p := NewRun(apiv1.RunID(fmt.Sprint("r", i)), "me")
		p.Run.Name, p.Run.CreatedAt = name, t0.Add(time.Duration(i)*time.Second)
		mustCreate(t, s, p)
	}
	finish(t, s, "r0", apiv1.PhaseSucceeded)
	for name, tc := range map[string]struct {
		p    store.ListRunsParams
		want []apiv1.RunID
	}{
		"by phase":   {store.ListRunsParams{Phase: apiv1.PhaseSucceeded}, []apiv1.RunID{"r0"}},
		"by name":    {store.ListRunsParams{Name: "train"}, []apiv1.RunID{"r1", "r0"}},
		"unfinished": {store.ListRunsParams{Unfinished: true}, []apiv1.RunID{"r2", "r1"}},
		"all":        {store.ListRunsParams{}, []apiv1.RunID{"r2", "r1", "r0"}},
	} {
		got, err := s.ListRuns(t.Context(), tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func testCount(t *testing.T, s store.Store) {
	for _, id := range []apiv1.RunID{"r1", "r2", "r3"} {
		mustCreate(t, s, NewRun(id, "me"))
	}
	finish(t, s, "r1", apiv1.PhaseFailed)
	got, err := s.CountRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[apiv1.Phase]int{apiv1.PhasePending: 2, apiv1.PhaseFailed: 1}, got); diff != "" {
		t.Errorf("CountRuns (-want +got):\n%s", diff)
	}
}

func testEventPages(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	var events []apiv1.Event
	for i := range 5 {
		events = append(events, apiv1.Event{Node: "a", Phase: apiv1.PhaseRunning, Reason: fmt.Sprint("E", i), Time: t0})
	}
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Events: events})
	first, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r1", Limit: 3})
	if err != nil || len(first) != 3 || first[0].Reason != "Submitted" || first[0].Run != "r1" {
		t.Fatalf("first page = %+v, %v; want Submitted, E0, E1", first, err)
	}
	rest, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r1", After: first[2].Seq})
	if err != nil || len(rest) != 3 || rest[0].Reason != "E2" || rest[2].Reason != "E4" {
		t.Errorf("after %d = %+v, %v; want E2, E3, E4", first[2].Seq, rest, err)
	}
	tail, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r1", Tail: 2, Limit: 1})
	if err != nil || len(tail) != 2 || tail[0].Reason != "E3" || tail[1].Reason != "E4" {
		t.Errorf("tail 2 = %+v, %v; want E3, E4, oldest first", tail, err)
	}
	if n, err := s.CountEvents(t.Context(), "r1", first[0].Seq); err != nil || n != 5 {
		t.Errorf("CountEvents after Submitted = %d, %v; want 5", n, err)
	}
	if n, err := s.CountEvents(t.Context(), "nope", 0); err != nil || n != 0 {
		t.Errorf("CountEvents of no run = %d, %v; want 0", n, err)
	}
}

func testRequestPhases(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	finish(t, s, "r1", apiv1.PhaseSucceeded)
	for name, req := range map[string]func() error{
		"cancel":  func() error { return s.RequestCancel(t.Context(), "r1", "ann") },
		"suspend": func() error { return s.RequestSuspend(t.Context(), "r1", true, "ann") },
	} {
		err := req()
		var pe *store.PhaseError
		if !errors.Is(err, store.ErrPhase) || !errors.As(err, &pe) || pe.Phase != apiv1.PhaseSucceeded {
			t.Errorf("%s of a Succeeded run = %v, want ErrPhase saying Succeeded", name, err)
		}
	}
	if err := s.RequestSuspend(t.Context(), "nope", true, "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RequestSuspend(unknown) = %v, want ErrNotFound", err)
	}
}

func testRetryRun(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	exit := 1
	apply(t, s, &store.Change{
		Run: "r1", Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed, Code: apiv1.CodeExit, FinishedAt: &t0, Suspended: &apiv1.SuspendedTime{Seconds: 2.5}},
		Nodes: []apiv1.NodeStatus{
			{Name: "a", Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"x": "1"}},
			{Name: "b", Phase: apiv1.PhaseFailed, Code: apiv1.CodeExit, FinishedAt: &t0},
		},
		Added: []apiv1.NodeStatus{
			{Name: "end", Phase: apiv1.PhaseSucceeded},
			{Name: "end.x_y", Phase: apiv1.PhaseSucceeded},
			{Name: "endless", Phase: apiv1.PhaseSucceeded},
		},
		Attempts: []store.AttemptRow{
			{Node: "a", AttemptStatus: apiv1.AttemptStatus{Number: 1, ID: "r1/a/1", Phase: apiv1.PhaseSucceeded}},
			{Node: "end.x_y", AttemptStatus: apiv1.AttemptStatus{Number: 1, ID: "r1/end.x_y/1", Phase: apiv1.PhaseSucceeded}},
			{Node: "b", AttemptStatus: apiv1.AttemptStatus{Number: 1, ID: "r1/b/1", Phase: apiv1.PhaseFailed, ExitCode: &exit}},
			{Node: "b", AttemptStatus: apiv1.AttemptStatus{Number: 2, ID: "r1/b/2", Phase: apiv1.PhaseFailed, ExitCode: &exit}},
		},
	})
	if got := get(t, s, "r1").Status.Suspended; got == nil || got.Seconds != 2.5 || got.Since != nil {
		t.Errorf("suspension stored as %+v, want 2.5 s in all and none now", got)
	}
	if err := s.RetryRun(t.Context(), "r1", store.Retry{Owner: "retrier", Until: t0.Add(time.Hour), Restart: []string{"end"}}); err != nil {
		t.Fatal(err)
	}
	run := get(t, s, "r1")
	a, b := run.Status.Nodes[0], run.Status.Nodes[1]
	if run.Status.Phase != apiv1.PhasePending || run.Status.FinishedAt != nil ||
		a.Phase != apiv1.PhaseSucceeded || a.Outputs["x"] != "1" || b.Phase != apiv1.PhasePending || b.AttemptBase != 2 || len(b.Attempts) != 2 {
		t.Errorf("after RetryRun: run %s, a %+v, b %+v; want Pending, a kept, b Pending past its 2 attempts", run.Status.Phase, a, b)
	}
	if run.Status.Suspended != nil {
		t.Errorf("after RetryRun the suspension is %+v: the retried run's timeout counts afresh", run.Status.Suspended)
	}
	// The restarted node and its child run again; a node whose name only
	// starts with the same letters does not.
	end, child, other := run.Status.Nodes[2], run.Status.Nodes[3], run.Status.Nodes[4]
	if end.Phase != apiv1.PhasePending || child.Phase != apiv1.PhasePending || child.AttemptBase != 1 || other.Phase != apiv1.PhaseSucceeded {
		t.Errorf("after RetryRun restarting end: end %s, end.x_y %s (base %d), endless %s; want Pending, Pending (base 1), Succeeded",
			end.Phase, child.Phase, child.AttemptBase, other.Phase)
	}
	if err := s.Apply(t.Context(), &store.Change{Run: "r1", Owner: "retrier", Events: []apiv1.Event{{Reason: "Mine", Time: t0}}}); err != nil {
		t.Errorf("the retrier does not own the run: %v", err)
	}
	if err := s.RetryRun(t.Context(), "r1", store.Retry{Owner: "retrier", Until: t0}); !errors.Is(err, store.ErrPhase) {
		t.Errorf("retrying a Pending run = %v, want ErrPhase", err)
	}
	if err := s.RetryRun(t.Context(), "nope", store.Retry{Owner: "retrier", Until: t0}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RetryRun(unknown) = %v, want ErrNotFound", err)
	}
}

func testReleaseLease(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	if err := s.ReleaseLease(t.Context(), "r1", "someone-else"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimRuns(t.Context(), store.ClaimRunsParams{Owner: "you", Now: t0, Until: t0.Add(time.Minute)}); len(got) != 0 {
		t.Fatalf("a lease released by someone else was claimed: %v", got)
	}
	if err := s.ReleaseLease(t.Context(), "r1", "me"); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClaimRuns(t.Context(), store.ClaimRunsParams{Owner: "you", Now: t0, Until: t0.Add(time.Minute)})
	if err != nil || len(got) != 1 {
		t.Errorf("claim after release = %v, %v; want r1", got, err)
	}
}

// testRetryKeepsWhatASucceededGroupHolds: a retry leaves the children of
// a group that succeeded as they ended (a map item that failed within the
// map's minSuccessRatio), and resets those of a group that failed.
func testRetryKeepsWhatASucceededGroupHolds(t *testing.T, s store.Store) {
	p := NewRun("r1", "me")
	p.Nodes = []string{"ok", "bad"}
	mustCreate(t, s, p)
	apply(t, s, &store.Change{
		Run: "r1", Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed, FinishedAt: &t0},
		Nodes: []apiv1.NodeStatus{{Name: "ok", Phase: apiv1.PhaseSucceeded}, {Name: "bad", Phase: apiv1.PhaseFailed}},
		Added: []apiv1.NodeStatus{
			{Name: "ok.0", Parent: "ok", Phase: apiv1.PhaseFailed},
			{Name: "ok.1", Parent: "ok", Phase: apiv1.PhaseSucceeded},
			{Name: "bad.0", Parent: "bad", Phase: apiv1.PhaseFailed},
			{Name: "bad.1", Parent: "bad", Phase: apiv1.PhaseSucceeded},
		},
	})
	if err := s.RetryRun(t.Context(), "r1", store.Retry{Owner: "me", Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	got := map[string]apiv1.Phase{}
	for _, n := range get(t, s, "r1").Status.Nodes {
		got[n.Name] = n.Phase
	}
	want := map[string]apiv1.Phase{
		"ok": apiv1.PhaseSucceeded, "ok.0": apiv1.PhaseFailed, "ok.1": apiv1.PhaseSucceeded,
		"bad": apiv1.PhasePending, "bad.0": apiv1.PhasePending, "bad.1": apiv1.PhaseSucceeded,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("phases after the retry (-want +got):\n%s", diff)
	}
}
