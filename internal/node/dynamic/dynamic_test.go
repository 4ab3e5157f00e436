package dynamic_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/dynamic"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/template"
	"kiln.dev/kiln/internal/workflow"
)

const task = `spec:
  params: [{name: size}]
  tasks:
  - name: gen
    command: [gen.py, "{{params.size}}"]
    dynamic: {output: frag}
    outputs: {parameters: [{name: frag}]}
`

// fragment is a valid fragment: two tasks, the second reading the
// first, and an output.
const fragment = `tasks:
- name: a
  command: [echo, "{{params.size}}"]
  outputs: {parameters: [{name: x}]}
- name: b
  dependsOn: [a]
  command: [echo, "{{tasks.a.outputs.parameters.x}}"]
outputs:
  parameters: [{name: result, value: "{{tasks.a.outputs.parameters.x}}"}]
`

func TestConformance(t *testing.T) {
	t.Parallel()
	nodetest.Run(t, dynamic.New(), nodetest.Compile(t, task))
}

func TestBuildReadsOnlyTheFragment(t *testing.T) {
	t.Parallel()
	h, tk := dynamic.New(), nodetest.Compile(t, strings.Replace(task, "[{name: frag}]", "[{name: frag}, {name: other}]", 1))
	spec := &job.Spec{}
	if err := h.Build(t.Context(), nodetest.Attempt(h, tk, 1, map[string]string{"size": "3"}), spec); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Outputs, []string{"frag"}) {
		t.Errorf("outputs = %q, want only the fragment's", spec.Outputs)
	}
	if !slices.Equal(spec.Processes[0].Command, []string{"gen.py", "3"}) {
		t.Errorf("command = %q, want gen.py 3", spec.Processes[0].Command)
	}
	if !h.RunsFirst(tk) || h.Kind() != apiv1.NodeKindDynamic {
		t.Errorf("RunsFirst, Kind = %v, %q; want true, %q", h.RunsFirst(tk), h.Kind(), apiv1.NodeKindDynamic)
	}
}

func TestExpandCompilesTheFragment(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, task)
	for name, text := range map[string]string{
		"YAML": fragment,
		"JSON": `{"tasks": [{"name": "a", "command": ["echo", "{{params.size}}"], "outputs": {"parameters": [{"name": "x"}]}},
			{"name": "b", "dependsOn": ["a"], "command": ["echo"]}],
			"outputs": {"parameters": [{"name": "result", "value": "{{tasks.a.outputs.parameters.x}}"}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			x := &node.Expansion{Task: tk, Outputs: map[string]string{"frag": text}, Params: []string{"size"}}
			ch, err := dynamic.New().Expand(t.Context(), x)
			if err != nil {
				t.Fatalf("Expand: %v", err)
			}
			checkChildren(t, ch)
			var record string
			if err := json.Unmarshal(ch.Record, &record); err != nil || record != text {
				t.Errorf("record = %s (%v), want the fragment's text as a JSON string", ch.Record, err)
			}

			// Rebuilt from the record, whatever the outputs hold now.
			again, err := dynamic.New().Expand(t.Context(), &node.Expansion{
				Task: tk, Outputs: map[string]string{"frag": "tasks: []"}, Recorded: ch.Record, Params: []string{"size"},
			})
			if err != nil {
				t.Fatalf("Expand from the record: %v", err)
			}
			checkChildren(t, again)
			if string(again.Record) != string(ch.Record) {
				t.Errorf("record rebuilt = %s, want %s", again.Record, ch.Record)
			}
		})
	}
}

func checkChildren(t *testing.T, ch *node.Children) {
	t.Helper()
	if diff := cmp.Diff(map[string]int{"a": 0, "b": 1}, ch.Plan.Index); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	if up := ch.Plan.Graph.Upstream(1); !slices.Equal(up, []int{0}) {
		t.Errorf("b waits on %v, want a (0)", up)
	}
	if !ch.Local || ch.Params != nil || ch.Items != nil || ch.MaxParallel != 0 {
		t.Errorf("children = %+v; want Local, reading the run's params, no items, no cap", ch)
	}
	if o := ch.Plan.Outputs; o == nil || len(o.Parameters) != 1 || o.Parameters[0].Name != "result" {
		t.Errorf("fragment outputs = %+v, want result", o)
	}
}

func TestExpandRefusesAnInvalidFragment(t *testing.T) {
	t.Parallel()

	cycle := "- {name: a, command: [x], dependsOn: [b]}\n- {name: b, command: [x], dependsOn: [a]}\n"
	cases := map[string]struct {
		fragment string
		want     []string // each problem, as "code field", in order
	}{
		"a cycle": {
			fragment: "tasks:\n" + cycle,
			want:     []string{"KLN-1008 tasks[0].dependsOn: dependency cycle: a -> b -> a"},
		},
		"an unknown field": {
			fragment: "tasks:\n- {name: a, comand: [x]}\n",
			want:     []string{"KLN-1002 tasks[0].comand", "KLN-1004 tasks[0].command"},
		},
		"a name YAML reads as a boolean": {
			fragment: "tasks:\n- {name: yes, command: [x]}\n",
			want:     []string{"KLN-1021 tasks[0].name"},
		},
		"every problem at once": {
			fragment: "tasks:\n" + cycle + "- {name: on, command: [x], comand: [y]}\n- {name: d, command: [x], dependsOn: [nope]}\n",
			want: []string{
				"KLN-1021 tasks[2].name", "KLN-1002 tasks[2].comand",
				"KLN-1007 tasks[3].dependsOn[0]", "KLN-1008 tasks[0].dependsOn",
			},
		},
		"no tasks": {
			fragment: "outputs: {}\n",
			want:     []string{"KLN-1004 tasks"},
		},
		"not YAML": {
			fragment: "tasks: [",
			want:     []string{"KLN-1001"},
		},
	}
	tk := nodetest.Compile(t, task)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ch, err := dynamic.New().Expand(t.Context(), &node.Expansion{Task: tk, Outputs: map[string]string{"frag": tc.fragment}})
			if ch != nil {
				t.Errorf("Expand gave children with its error")
			}
			errs := apiv1.Errors(err)
			if len(errs) != 1 || errs[0].Code != apiv1.CodeFragment || errs[0].Object != "Task/gen" {
				t.Fatalf("Expand = %v; want one %s for Task/gen", err, apiv1.CodeFragment)
			}
			msg, ok := strings.CutPrefix(errs[0].Message, "the fragment it wrote is not valid: ")
			if !ok {
				t.Fatalf("message %q does not say the fragment is not valid", errs[0].Message)
			}
			problems := strings.Split(msg, "; ")
			if len(problems) != len(tc.want) {
				t.Fatalf("message lists %d problems, want %d: %q", len(problems), len(tc.want), msg)
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, w) }) {
					t.Errorf("message %q does not list %q", msg, w)
				}
			}
		})
	}
}

func TestGather(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, task)
	ch, err := dynamic.New().Expand(t.Context(), &node.Expansion{Task: tk, Outputs: map[string]string{"frag": fragment}, Params: []string{"size"}})
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"tasks.a.outputs.parameters.x": "42"}
	expand := func(s string) (string, error) {
		return template.Expand(s, func(r template.Ref) (string, bool) { v, ok := values[r.Raw]; return v, ok })
	}
	base := map[string]string{"frag": fragment}
	group := func(phases ...apiv1.Phase) *node.Group {
		g := &node.Group{Expand: expand, Plan: ch.Plan, Base: base}
		g.Counts.Total = len(phases)
		for i, p := range phases {
			g.Children = append(g.Children, &apiv1.NodeStatus{Name: "gen." + ch.Plan.Tasks[i].Spec.Name, Phase: p, Message: "it broke"})
			switch p {
			case apiv1.PhaseSucceeded:
				g.Counts.Succeeded++
			case apiv1.PhaseFailed:
				g.Counts.Failed++
			case apiv1.PhaseCancelled:
				g.Counts.Cancelled++
			default:
				g.Counts.Running++
			}
		}
		return g
	}
	ok, failed, running := apiv1.PhaseSucceeded, apiv1.PhaseFailed, apiv1.PhaseRunning

	cases := map[string]struct {
		group       *node.Group
		want        node.Verdict
		wantDecided bool
	}{
		"all succeeded: the node's own outputs and the fragment's": {
			group:       group(ok, ok),
			want:        node.Verdict{Phase: ok, Outputs: map[string]string{"frag": fragment, "result": "42"}},
			wantDecided: true,
		},
		"the first failed child fails the node at once": {
			group:       group(failed, running),
			want:        node.Verdict{Phase: failed, Code: apiv1.CodeChildFailed, Message: "task gen.a failed: it broke"},
			wantDecided: true,
		},
		"a cancelled child fails the node": {
			group:       group(ok, apiv1.PhaseCancelled),
			want:        node.Verdict{Phase: failed, Code: apiv1.CodeChildFailed, Message: "task gen.b was cancelled: it broke"},
			wantDecided: true,
		},
		"children still running: not decided": {
			group: group(ok, running),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, decided := dynamic.New().Gather(tk, tc.group)
			if decided != tc.wantDecided {
				t.Fatalf("decided = %v, want %v (%+v)", decided, tc.wantDecided, got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
	if base["result"] != "" {
		t.Error("Gather wrote into the node's own outputs")
	}
}

// An output that reads a task that did not run fails the node for good.
func TestGatherFailsOnAnOutputItCannotRead(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, task)
	ch, err := dynamic.New().Expand(t.Context(), &node.Expansion{Task: tk, Outputs: map[string]string{"frag": fragment}, Params: []string{"size"}})
	if err != nil {
		t.Fatal(err)
	}
	g := &node.Group{
		Plan:     ch.Plan,
		Children: []*apiv1.NodeStatus{{Name: "gen.a", Phase: apiv1.PhaseSkipped}, {Name: "gen.b", Phase: apiv1.PhaseSkipped}},
		Expand: func(s string) (string, error) {
			return template.Expand(s, func(template.Ref) (string, bool) { return "", false })
		},
	}
	g.Counts.Total, g.Counts.Skipped = 2, 2
	v, decided := dynamic.New().Gather(tk, g)
	if !decided || v.Phase != apiv1.PhaseFailed || v.Code != apiv1.CodeOutput || !v.Permanent || !strings.Contains(v.Message, "output result") {
		t.Errorf("Gather = %+v, %v; want a permanent %s naming output result", v, decided, apiv1.CodeOutput)
	}
}

// TestExpandRecordsTheWorkflowsItRuns: a fragment that runs a workflow
// of the run's library and a stored template records both with it; a
// rebuild from the record needs neither the library nor the store, and
// a record of an older engine (the fragment alone, a JSON string) still
// reads.
func TestExpandRecordsTheWorkflowsItRuns(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, task)
	wf := func(name, word string) *apiv1.Workflow {
		return &apiv1.Workflow{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflow}, Metadata: apiv1.ObjectMeta{Name: name},
			Spec: apiv1.WorkflowSpec{Tasks: []apiv1.Task{{Name: "say", Command: []string{"echo", word}}}},
		}
	}
	lib := workflow.Library{"prepare": {Doc: &workflow.Document{Kind: apiv1.KindWorkflow, Name: "prepare"}, Workflow: wf("prepare", "ready")}}
	asked := 0
	stored := func(name string) (*apiv1.Workflow, error) {
		asked++
		if name == "shout" {
			return wf("shout", "hey"), nil
		}
		return nil, nil
	}
	frag := "tasks:\n- {name: p, workflow: {name: prepare}}\n- {name: s, workflow: {name: shout}}\n"
	first, err := dynamic.New().Expand(t.Context(), &node.Expansion{
		Task: tk, Outputs: map[string]string{"frag": frag}, Params: []string{"size"}, Library: lib, Stored: stored,
	})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Fragment  string            `json:"fragment"`
		Workflows []*apiv1.Workflow `json:"workflows"`
	}
	if err := json.Unmarshal(first.Record, &rec); err != nil || rec.Fragment != frag || len(rec.Workflows) != 2 {
		t.Fatalf("record %s (%v); want the fragment and the two workflows", first.Record, err)
	}
	again, err := dynamic.New().Expand(t.Context(), &node.Expansion{Task: tk, Recorded: first.Record, Params: []string{"size"}})
	if err != nil {
		t.Fatalf("rebuilding from the record: %v", err)
	}
	if got := again.Plan.Tasks[1].Sub.Plan.Workflow.Spec.Tasks[0].Command; !slices.Equal(got, []string{"echo", "hey"}) || asked != 1 {
		t.Errorf("rebuilt template runs %q, store asked %d times; want the recorded template, asked once", got, asked)
	}
	old, _ := json.Marshal(fragment)
	if _, err := dynamic.New().Expand(t.Context(), &node.Expansion{Task: tk, Recorded: old, Params: []string{"size"}}); err != nil {
		t.Errorf("an older record: %v", err)
	}
}
