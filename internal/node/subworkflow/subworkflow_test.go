package subworkflow_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/node/subworkflow"
	"kiln.dev/kiln/internal/template"
	"kiln.dev/kiln/internal/workflow"
)

// files are a workflow that runs train as a subworkflow, and has onExit
// tasks.
const files = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: main}
spec:
  params: [{name: count}]
  tasks:
  - name: fit
    workflow:
      name: train
      params:
      - {name: epochs, value: "{{params.count}}"}
      - {name: tag, value: "run-{{params.count}}-{{run.id}}"}
  onExit:
  - {name: notify, command: [echo, "{{workflow.status}}"]}
  - {name: clean, command: ["true"], dependsOn: [notify]}
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: train}
spec:
  params: [{name: lr, default: "0.1"}, {name: epochs}, {name: tag, default: none}, {name: empty, default: ""}]
  tasks:
  - name: step
    command: [train, "{{params.epochs}}"]
    outputs: {parameters: [{name: loss}]}
  outputs:
    parameters: [{name: loss, value: "{{tasks.step.outputs.parameters.loss}}"}]
`

// compile compiles files and returns the runnable workflow's plan.
func compile(t *testing.T) *workflow.Plan {
	t.Helper()
	docs, err := workflow.Read("wf.yaml", strings.NewReader(files))
	if err != nil {
		t.Fatal(err)
	}
	checked, err := workflow.CheckDocuments(docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(checked) != 1 {
		t.Fatalf("%d runnable workflows, want 1", len(checked))
	}
	return checked[0].Plan
}

func TestKinds(t *testing.T) {
	t.Parallel()
	if got := subworkflow.New().Kind(); got != apiv1.NodeKindSubworkflow {
		t.Errorf("New().Kind() = %q, want %q", got, apiv1.NodeKindSubworkflow)
	}
	if got := subworkflow.Exit().Kind(); got != apiv1.NodeKindExit {
		t.Errorf("Exit().Kind() = %q, want %q", got, apiv1.NodeKindExit)
	}
	if _, err := node.NewRegistry(subworkflow.New(), subworkflow.Exit()); err != nil {
		t.Errorf("a registry refuses the two handlers: %v", err)
	}
}

func TestExpandResolvesAndRecordsParams(t *testing.T) {
	t.Parallel()
	plan := compile(t)
	task := &plan.Tasks[plan.Index["fit"]]
	ch, err := subworkflow.New().Expand(t.Context(), &node.Expansion{
		Task: task, Inputs: &nodetest.Inputs{Params: map[string]string{"count": "5"}},
	})
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	want := map[string]string{"lr": "0.1", "epochs": "5", "tag": "run-5-<run.id>", "empty": ""}
	if diff := cmp.Diff(want, ch.Params); diff != "" {
		t.Errorf("params (-want +got):\n%s", diff)
	}
	if ch.Plan != task.Sub.Plan || !ch.Local || ch.Items != nil || ch.MaxParallel != 0 {
		t.Errorf("children = %+v; want the subworkflow's plan, Local, no items, no cap", ch)
	}
	if _, ok := ch.Plan.Index["step"]; !ok || len(ch.Plan.Tasks) != 1 {
		t.Errorf("children's tasks are %v, want the subworkflow's step", ch.Plan.Index)
	}
	var recorded map[string]string
	if err := json.Unmarshal(ch.Record, &recorded); err != nil {
		t.Fatalf("record %q: %v", ch.Record, err)
	}
	if diff := cmp.Diff(want, recorded); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}

	// Rebuilt from the record: the same params, whatever the run holds now.
	again, err := subworkflow.New().Expand(t.Context(), &node.Expansion{
		Task: task, Inputs: &nodetest.Inputs{Params: map[string]string{"count": "99"}}, Recorded: ch.Record,
	})
	if err != nil {
		t.Fatalf("Expand from the record: %v", err)
	}
	if diff := cmp.Diff(want, again.Params); diff != "" {
		t.Errorf("params rebuilt (-want +got):\n%s", diff)
	}
	if string(again.Record) != string(ch.Record) {
		t.Errorf("record rebuilt = %s, want %s", again.Record, ch.Record)
	}
}

// failing is a node.Inputs whose templates never expand.
type failing struct{ *nodetest.Inputs }

func (failing) Expand(string) (string, error) { return "", errors.New("no such output") }

func TestExpandNamesAParamThatDoesNotExpand(t *testing.T) {
	t.Parallel()
	plan := compile(t)
	_, err := subworkflow.New().Expand(t.Context(), &node.Expansion{Task: &plan.Tasks[plan.Index["fit"]], Inputs: failing{&nodetest.Inputs{}}})
	errs := apiv1.Errors(err)
	if len(errs) != 1 || errs[0].Code != apiv1.CodeTemplate || errs[0].Field != "workflow.params[0].value" ||
		!strings.Contains(errs[0].Message, "no such output") {
		t.Fatalf("Expand = %v; want one %s at workflow.params[0].value", err, apiv1.CodeTemplate)
	}
}

func TestExitGivesTheOnExitTasks(t *testing.T) {
	t.Parallel()
	plan := compile(t)
	i, ok := plan.Index[workflow.ExitNode]
	if !ok {
		t.Fatalf("the plan has no %s node: %v", workflow.ExitNode, plan.Index)
	}
	task := &plan.Tasks[i]
	ch, err := subworkflow.Exit().Expand(t.Context(), &node.Expansion{Task: task, Inputs: failing{&nodetest.Inputs{}}})
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	if ch.Plan != task.Sub.Plan || !ch.Local || ch.Params != nil || ch.Record != nil {
		t.Errorf("children = %+v; want the onExit plan, Local, the run's params, nothing recorded", ch)
	}
	if diff := cmp.Diff(map[string]int{"notify": 0, "clean": 1}, ch.Plan.Index); diff != "" {
		t.Errorf("onExit tasks (-want +got):\n%s", diff)
	}
	if up := ch.Plan.Graph.Upstream(1); len(up) != 1 || up[0] != 0 {
		t.Errorf("clean waits on %v, want notify (0)", up)
	}
}

func TestGather(t *testing.T) {
	t.Parallel()
	plan := compile(t)
	sub := plan.Tasks[plan.Index["fit"]].Sub.Plan
	values := map[string]string{"tasks.step.outputs.parameters.loss": "0.25"}
	expand := func(s string) (string, error) {
		return template.Expand(s, func(r template.Ref) (string, bool) { v, ok := values[r.Raw]; return v, ok })
	}
	g := func(phase apiv1.Phase) *node.Group {
		c := &apiv1.NodeStatus{Name: "fit.step", Phase: phase, Message: "exit 3"}
		g := &node.Group{Children: []*apiv1.NodeStatus{c}, Expand: expand, Plan: sub}
		g.Counts.Total = 1
		switch phase {
		case apiv1.PhaseSucceeded:
			g.Counts.Succeeded = 1
		case apiv1.PhaseFailed:
			g.Counts.Failed = 1
		default:
			g.Counts.Running = 1
		}
		return g
	}
	task := &plan.Tasks[plan.Index["fit"]]

	v, decided := subworkflow.New().Gather(task, g(apiv1.PhaseSucceeded))
	if diff := cmp.Diff(node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: map[string]string{"loss": "0.25"}}, v); !decided || diff != "" {
		t.Errorf("all succeeded: decided %v, verdict (-want +got):\n%s", decided, diff)
	}
	v, decided = subworkflow.New().Gather(task, g(apiv1.PhaseFailed))
	if !decided || v.Phase != apiv1.PhaseFailed || v.Code != apiv1.CodeChildFailed || v.Message != "task fit.step failed: exit 3" {
		t.Errorf("a failed task: decided %v, %+v; want %s naming it", decided, v, apiv1.CodeChildFailed)
	}
	if v, decided = subworkflow.New().Gather(task, g(apiv1.PhaseRunning)); decided {
		t.Errorf("a running task: decided %+v", v)
	}
}
