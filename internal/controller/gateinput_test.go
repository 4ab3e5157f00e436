package controller

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/node/builtin"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// newIdleEngine is a controller on a real SQLite store that is never
// started: no worker takes runs from its queue, so a test sees what was
// queued. Its backend starts nothing until asked.
func newIdleEngine(t *testing.T) (*Controller, *sqlite.Store) {
	t.Helper()
	home := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := New(Config{
		Store: st, Backend: local.New(local.Config{Home: home}), Pool: resource.NewPool(resource.Request{MilliCPU: 1000}),
		Handlers: builtin.Registry(), Owner: "idle",
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, st
}

var gateT0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// gateRun is a running run, owned by owner, with a gate of every kind
// waiting, one decided, one not started, and a command task.
func gateRun(t *testing.T, st store.Store, id apiv1.RunID, owner string) {
	t.Helper()
	since, at := gateT0, gateT0.Add(time.Minute)
	nodes := []apiv1.NodeStatus{
		{Name: "ship", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "approve", Message: "ship?", WaitingSince: &since}},
		{Name: "count", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "signal", Type: "int", WaitingSince: &since}},
		{Name: "nap", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "sleep", WaitingSince: &since, WakeAt: &at}},
		{Name: "agreed", Phase: apiv1.PhaseSucceeded, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{
			Kind: "approve", WaitingSince: &since, Decision: "approved", By: "ann", At: &at, Reason: "fine",
		}},
		{Name: "later", Phase: apiv1.PhasePending},
		{Name: "held", Phase: apiv1.PhaseSkipped, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "approve"}},
		{Name: "train", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindTrain},
	}
	var tasks []apiv1.Task
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
		task := apiv1.Task{Name: n.Name}
		if n.Name != "train" {
			task.Gate = &apiv1.Gate{Approve: &apiv1.ApproveGate{}}
		}
		tasks = append(tasks, task)
	}
	err := st.CreateRun(t.Context(), store.CreateRunParams{
		Run: apiv1.Run{
			ID: id, Name: "wf", Kind: apiv1.KindWorkflow, CreatedAt: gateT0,
			Workflow: &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "wf"}, Spec: apiv1.WorkflowSpec{Tasks: tasks}},
		},
		Nodes: names, Owner: owner, LeaseUntil: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Apply(t.Context(), &store.Change{Run: id, Owner: owner, Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning, StartedAt: &since}, Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSendGateInputRefusesWhatNoGateWaitsFor(t *testing.T) {
	t.Parallel()
	c, st := newIdleEngine(t)
	gateRun(t, st, "wf-1", "elsewhere")
	gateRun(t, st, "wf-ended", "elsewhere")
	if err := st.Apply(t.Context(), &store.Change{Run: "wf-ended", Owner: "elsewhere", Status: &apiv1.RunStatus{Phase: apiv1.PhaseCancelled}}); err != nil {
		t.Fatal(err)
	}
	yes := true
	approve := apiv1.GateInput{Approve: &yes}
	value := func(v string) apiv1.GateInput { return apiv1.GateInput{Value: &v} }
	const gates = "its gate tasks are ship, count, nap, agreed, later, held"

	cases := map[string]struct {
		run      apiv1.RunID
		node     string
		in       apiv1.GateInput
		wantCode apiv1.Code
		wantSays string
	}{
		"an unknown run":                 {run: "wf-nope", node: "ship", in: approve, wantCode: apiv1.CodeRunNotFound, wantSays: "Run/wf-nope"},
		"a run that ended":               {run: "wf-ended", node: "ship", in: approve, wantCode: apiv1.CodeRunPhase, wantSays: "the run is Cancelled"},
		"an unknown task":                {run: "wf-1", node: "shipp", in: approve, wantCode: apiv1.CodeNotWaiting, wantSays: `no task "shipp"; ` + gates},
		"a training task":                {run: "wf-1", node: "train", in: approve, wantCode: apiv1.CodeNotWaiting, wantSays: "task train is a train task in phase Running, not a gate; " + gates},
		"a gate not started":             {run: "wf-1", node: "later", in: approve, wantCode: apiv1.CodeNotWaiting, wantSays: "task later is a task in phase Pending, not a gate"},
		"a gate skipped before its wait": {run: "wf-1", node: "held", in: approve, wantCode: apiv1.CodeNotWaiting, wantSays: "task held is a gate (approve) in phase Skipped, not waiting"},
		"a gate decided already": {
			run: "wf-1", node: "agreed", in: approve, wantCode: apiv1.CodeNotWaiting,
			wantSays: `task agreed: the gate is not waiting: it was approved by ann at 2026-03-04T05:07:07Z ("fine")`,
		},
		"a value to an approval gate":   {run: "wf-1", node: "ship", in: value("yes"), wantCode: apiv1.CodeNotWaiting, wantSays: "task ship: the gate waits for an approval or a rejection"},
		"an approval to a signal gate":  {run: "wf-1", node: "count", in: approve, wantCode: apiv1.CodeNotWaiting, wantSays: "value of type int (kiln signal)"},
		"an approval to a sleeping one": {run: "wf-1", node: "nap", in: approve, wantCode: apiv1.CodeNotWaiting, wantSays: "sleeps until 2026-03-04T05:07:07Z"},
		"a word to an int gate":         {run: "wf-1", node: "count", in: value("ten"), wantCode: apiv1.CodeNotWaiting, wantSays: `task count: the value "ten" is not an int`},
		"a value over 64 KiB":           {run: "wf-1", node: "count", in: value(strings.Repeat("1", 64<<10+1)), wantCode: apiv1.CodeOutOfRange, wantSays: "65537 bytes"},
	}
	t.Run("each refusal", func(t *testing.T) { // returns once every case has
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				err := c.runs.SendGateInput(t.Context(), tc.run, tc.node, tc.in)
				if got := apiv1.CodeOf(err); got != tc.wantCode || !strings.Contains(err.Error(), tc.wantSays) {
					t.Errorf("SendGateInput = %v (code %q); want %s saying %q", err, got, tc.wantCode, tc.wantSays)
				}
			})
		}
	})
	for _, id := range []apiv1.RunID{"wf-1", "wf-ended"} {
		if got, err := st.GateInputs(t.Context(), id); err != nil || len(got) != 0 {
			t.Errorf("GateInputs(%s) after refusals = %+v, %v; want none kept", id, got, err)
		}
	}
}

func TestSendGateInputRecordsAndWakesAnOwnedRun(t *testing.T) {
	t.Parallel()
	c, st := newIdleEngine(t)
	gateRun(t, st, "wf-mine", "idle")
	gateRun(t, st, "wf-theirs", "elsewhere")
	mine, err := st.GetRun(t.Context(), "wf-mine")
	if err != nil {
		t.Fatal(err)
	}
	c.runs.mu.Lock()
	c.runs.byID["wf-mine"] = &runState{run: mine} // as if loaded: only lookup reads it here
	c.runs.mu.Unlock()

	no, seven, given := false, "7", gateT0.Add(time.Hour)
	before := time.Now().UTC()
	if err := c.runs.SendGateInput(t.Context(), "wf-theirs", "ship", apiv1.GateInput{Approve: &no, Reason: "not today", By: "ann"}); err != nil {
		t.Fatal(err)
	}
	if depth := c.QueueDepth(); depth != 0 {
		t.Errorf("queue depth after an input to a run of another engine = %d, want 0", depth)
	}
	if err := c.runs.SendGateInput(t.Context(), "wf-mine", "count", apiv1.GateInput{Value: &seven, By: "bob", At: given}); err != nil {
		t.Fatal(err)
	}
	if depth := c.QueueDepth(); depth != 1 {
		t.Errorf("queue depth after an input to an owned run = %d, want 1: the run is woken", depth)
	}

	theirs, err := st.GateInputs(t.Context(), "wf-theirs")
	if err != nil || len(theirs) != 1 {
		t.Fatalf("GateInputs(wf-theirs) = %+v, %v; want one", theirs, err)
	}
	if at := theirs[0].At; at.Before(before) || at.After(time.Now().UTC()) {
		t.Errorf("At = %v, want the time it was sent (after %v)", at, before)
	}
	want := []store.GateInputRow{{Node: "ship", GateInput: apiv1.GateInput{Approve: &no, Reason: "not today", By: "ann", At: theirs[0].At}}}
	if diff := cmp.Diff(want, theirs); diff != "" {
		t.Errorf("GateInputs(wf-theirs) (-want +got):\n%s", diff)
	}
	got, err := st.GateInputs(t.Context(), "wf-mine")
	want = []store.GateInputRow{{Node: "count", GateInput: apiv1.GateInput{Value: &seven, By: "bob", At: given}}}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("GateInputs(wf-mine) = %v; (-want +got):\n%s", err, diff)
	}
}
