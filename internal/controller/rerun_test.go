package controller

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// rerunPlan compiles prep → (left, right) → join, with side on its own,
// a map sweep after prep, and an onExit task.
func rerunPlan(t *testing.T) *workflow.Plan {
	t.Helper()
	docs, err := workflow.Read("wf.yaml", strings.NewReader(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  tasks:
  - {name: prep, command: ["true"]}
  - {name: left, command: ["true"], dependsOn: [prep]}
  - {name: right, command: ["true"], dependsOn: [prep]}
  - {name: join, command: ["true"], dependsOn: [left, right]}
  - {name: side, command: ["true"]}
  - {name: sweep, command: ["true"], dependsOn: [prep], forEach: {items: ["a", "b"]}}
  onExit:
  - {name: notify, command: ["true"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := workflow.DecodeWorkflow(&docs[0])
	if err != nil {
		t.Fatal(err)
	}
	plan, err := workflow.Compile(&docs[0], wf, nil)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// sourceRun is a run of rerunPlan whose tasks ended in the given phases
// (Succeeded when not named), each after one attempt.
func sourceRun(phases map[string]apiv1.Phase) *apiv1.Run {
	run := &apiv1.Run{ID: "wf-src", Status: apiv1.RunStatus{Phase: apiv1.PhaseSucceeded}}
	for _, name := range []string{"prep", "left", "right", "join", "side", "sweep", "onExit", "sweep.0", "sweep.1"} {
		n := apiv1.NodeStatus{
			Name: name, Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"o": name},
			Attempts: []apiv1.AttemptStatus{{Number: 1, Phase: apiv1.PhaseSucceeded}},
		}
		if p, ok := phases[name]; ok {
			n.Phase = p
		}
		if strings.HasPrefix(name, "sweep.") {
			n.Parent = "sweep"
		}
		run.Status.Nodes = append(run.Status.Nodes, n)
	}
	return run
}

func TestRerunChoosesWhatRunsAgain(t *testing.T) {
	t.Parallel()
	plan := rerunPlan(t)
	const r, u, l = "run", "reuse", "leave"
	// Wanted choices, in the plan's order: prep left right join side sweep onExit.
	tests := map[string]struct {
		mode   apiv1.RerunMode
		node   string
		failed []string
		want   []string
	}{
		"from a middle task runs it and what follows, onExit too": {
			mode: apiv1.RerunFrom, node: "left", want: []string{u, r, u, r, u, u, r},
		},
		"from the first task runs everything downstream of it": {
			mode: apiv1.RerunFrom, node: "prep", want: []string{r, r, r, r, u, r, r},
		},
		"from also runs again what did not succeed in the source, as retry would": {
			mode: apiv1.RerunFrom, node: "join", failed: []string{"side"}, want: []string{u, u, u, r, r, u, r},
		},
		"only runs the task alone on its reused upstream, without onExit": {
			mode: apiv1.RerunOnly, node: "join", want: []string{u, u, u, r, l, l, l},
		},
		"only a first task leaves every other task out": {
			mode: apiv1.RerunOnly, node: "prep", want: []string{r, l, l, l, l, l, l},
		},
		"until runs the task and its ancestors, and onExit": {
			mode: apiv1.RerunUntil, node: "left", want: []string{r, r, l, l, l, l, r},
		},
		"until a task with two branches above runs both": {
			mode: apiv1.RerunUntil, node: "join", failed: []string{"right"}, want: []string{r, r, r, r, l, l, r},
		},
	}
	names := map[choice]string{runAgain: r, reuse: u, leaveOut: l}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			phases := map[string]apiv1.Phase{}
			for _, f := range tc.failed {
				phases[f] = apiv1.PhaseFailed
			}
			choices, err := rerunChoices(plan, sourceRun(phases), tc.mode, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]string, len(choices))
			for i, c := range choices {
				got[i] = names[c]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("choices for prep left right join side sweep onExit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRerunPresetNodesSayWhatBecameOfThem(t *testing.T) {
	t.Parallel()
	src := sourceRun(nil)
	src.Status.Nodes[0].Reused = &apiv1.Reused{Run: "wf-first", Node: "prep", Attempt: 3}
	preset, err := rerunPreset(rerunPlan(t), src, apiv1.RerunOnly, "left")
	if err != nil {
		t.Fatal(err)
	}
	skipped := func(name string, kind apiv1.NodeKind) apiv1.NodeStatus {
		return apiv1.NodeStatus{
			Name: name, Phase: apiv1.PhaseSkipped, Kind: kind,
			Message: "not run: not part of this rerun (--only left runs left alone)",
		}
	}
	want := []apiv1.NodeStatus{
		{
			Name: "prep", Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"o": "prep"},
			Reused: &apiv1.Reused{Run: "wf-first", Node: "prep", Attempt: 3}, Message: "reused from wf-first",
		},
		skipped("right", apiv1.NodeKindCommand), skipped("join", apiv1.NodeKindCommand), skipped("side", apiv1.NodeKindCommand),
		skipped("sweep", apiv1.NodeKindMap), skipped("onExit", apiv1.NodeKindExit),
	}
	if diff := cmp.Diff(want, preset); diff != "" {
		t.Errorf("preset nodes (-want +got):\n%s", diff)
	}
	preset, err = rerunPreset(rerunPlan(t), sourceRun(nil), apiv1.RerunFrom, "join")
	if err != nil {
		t.Fatal(err)
	}
	if got := preset[1].Reused; got == nil || *got != (apiv1.Reused{Run: "wf-src", Node: "left", Attempt: 1}) {
		t.Errorf("left reused from %+v, want wf-src's left, attempt 1", got)
	}
}

func TestRerunRefusesNodesItCannotStartFrom(t *testing.T) {
	t.Parallel()
	plan := rerunPlan(t)
	tests := map[string]struct {
		mode      apiv1.RerunMode
		node      string
		failed    string
		wantCode  apiv1.Code
		wantInErr []string
	}{
		"an unknown task is named and the tasks are listed": {
			mode: apiv1.RerunFrom, node: "nope", wantCode: apiv1.CodeRerunNode,
			wantInErr: []string{`"nope"`, "prep, left, right, join, side, sweep"},
		},
		"a child is refused with its parent named": {
			mode: apiv1.RerunUntil, node: "sweep.1", wantCode: apiv1.CodeRerunNode, wantInErr: []string{"sweep.1 is a child of task sweep", "name its parent: sweep"},
		},
		"the exit handler is not a task": {
			mode: apiv1.RerunOnly, node: "onExit", wantCode: apiv1.CodeRerunNode, wantInErr: []string{"exit handler"},
		},
		"only with an upstream task that failed names it": {
			mode: apiv1.RerunOnly, node: "join", failed: "right", wantCode: apiv1.CodeRerunUpstream,
			wantInErr: []string{"task right, which is Failed", "--until join"},
		},
		"an unknown mode": {
			mode: "after", node: "join", wantCode: apiv1.CodeBadRequest, wantInErr: []string{`"after"`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := rerunChoices(plan, sourceRun(map[string]apiv1.Phase{tc.failed: apiv1.PhaseFailed}), tc.mode, tc.node)
			var e *apiv1.Error
			if !errors.As(err, &e) || e.Code != tc.wantCode {
				t.Fatalf("err = %v, want code %s", err, tc.wantCode)
			}
			for _, s := range tc.wantInErr {
				if !strings.Contains(e.Error(), s) {
					t.Errorf("err %q does not say %q", e.Error(), s)
				}
			}
		})
	}
}
