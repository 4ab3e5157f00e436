package workflow

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// problems are errs as code and field, each checked to name the file
// and object (unless "") it was found in.
func problems(t *testing.T, errs []*apiv1.Error, file, object string) []problem {
	t.Helper()
	var got []problem
	for _, e := range errs {
		got = append(got, problem{e.Code, e.Field})
		if e.File != file || (object != "" && e.Object != object) {
			t.Errorf("error %q does not name %s and %s", e, file, object)
		}
	}
	return got
}

func TestCompileReportsEveryProblemOfTheNewFields(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		spec string
		want []problem
	}{
		"forEach with two sources": {
			spec: "spec:\n  params: [{name: list}]\n  tasks:\n  - {name: m, command: [x], forEach: {items: [1], from: '{{params.list}}'}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].forEach"}},
		},
		"forEach with no source": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {maxParallel: 2}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].forEach"}},
		},
		"a range with both end and count": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {range: {end: 3, count: 2}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].forEach.range"}},
		},
		"a range with neither end nor count": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {range: {start: 3}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].forEach.range"}},
		},
		"a range one number too long": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {range: {count: 20001}}}\n  - {name: o, command: [x], forEach: {range: {start: 1, end: 40002, step: 2}}}\n",
			want: []problem{{apiv1.CodeOutOfRange, "spec.tasks[0].forEach.range"}, {apiv1.CodeOutOfRange, "spec.tasks[1].forEach.range"}},
		},
		"a range whose numbers would overflow": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {range: {count: 3, step: 4000000000000000000}}}\n",
			want: []problem{{apiv1.CodeOutOfRange, "spec.tasks[0].forEach.range"}},
		},
		"maxParallel negative": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {items: [1], maxParallel: -1}}\n",
			want: []problem{{apiv1.CodeOutOfRange, "spec.tasks[0].forEach.maxParallel"}},
		},
		"minSuccessRatio 0 and 1.5": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {items: [1], minSuccessRatio: 0}}\n  - {name: o, command: [x], forEach: {items: [1], minSuccessRatio: 1.5}}\n",
			want: []problem{{apiv1.CodeOutOfRange, "spec.tasks[0].forEach.minSuccessRatio"}, {apiv1.CodeOutOfRange, "spec.tasks[1].forEach.minSuccessRatio"}},
		},
		"minSuccesses and minSuccessRatio both": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {items: [1, 2], minSuccesses: 1, minSuccessRatio: 0.5}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].forEach"}},
		},
		"minSuccesses above the literal items": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {items: [p, q], minSuccesses: 3}}\n  - {name: o, command: [x], forEach: {range: {count: 2}, minSuccesses: 3}}\n",
			want: []problem{{apiv1.CodeOutOfRange, "spec.tasks[0].forEach.minSuccesses"}, {apiv1.CodeOutOfRange, "spec.tasks[1].forEach.minSuccesses"}},
		},
		"forEach with a gate": {
			spec: "spec:\n  tasks:\n  - {name: m, gate: {approve: {}}, forEach: {items: [1]}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].forEach"}},
		},
		"forEach with dynamic": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], dynamic: {output: f}, outputs: {parameters: [{name: f}]}, forEach: {items: [1]}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].forEach"}},
		},
		"a gate with two kinds": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {approve: {}, sleep: {duration: 1m}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate"}},
		},
		"a gate with no kind": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {timeout: 1m}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate"}},
		},
		"a gate and a command": {
			spec: "spec:\n  tasks:\n  - {name: g, command: [x], gate: {approve: {}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0]"}},
		},
		"a sleep with both duration and until": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {sleep: {duration: 1m, until: '2026-01-01T00:00:00Z'}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate.sleep"}},
		},
		"a sleep with neither": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {sleep: {}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate.sleep"}},
		},
		"a bad until and a bad duration": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {sleep: {until: next week}}}\n  - {name: h, gate: {sleep: {duration: 5 minutes}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate.sleep.until"}, {apiv1.CodeDuration, "spec.tasks[1].gate.sleep.duration"}},
		},
		"an until with an unknown template": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {sleep: {until: '{{params.when}}'}}}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[0].gate.sleep.until"}},
		},
		"a signal type that does not exist": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {signal: {type: date}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate.signal.type"}},
		},
		"a default not of the signal's type": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {signal: {type: int, default: '1.5'}}}\n  - {name: h, gate: {signal: {type: json, default: '{'}}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate.signal.default"}, {apiv1.CodeInvalidValue, "spec.tasks[1].gate.signal.default"}},
		},
		"onTimeout without timeout": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {approve: {}, onTimeout: skip}}\n",
			want: []problem{{apiv1.CodeRequired, "spec.tasks[0].gate.timeout"}},
		},
		"onTimeout that is no action": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {approve: {}, timeout: 1m, onTimeout: retry}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].gate.onTimeout"}},
		},
		"onTimeout succeed on a signal without default": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {signal: {type: int}, timeout: 1m, onTimeout: succeed}}\n",
			want: []problem{{apiv1.CodeRequired, "spec.tasks[0].gate.signal.default"}},
		},
		"a gate with resources, which do not apply": {
			spec: "spec:\n  tasks:\n  - {name: g, gate: {approve: {}}, resources: {cpu: 1}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].resources"}},
		},
		"a subworkflow task with a timeout, which does not apply": {
			spec: "spec:\n  tasks:\n  - {name: s, workflow: {name: other}, timeout: 1m}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].timeout"}, {apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}},
		},
		"dynamic without output": {
			spec: "spec:\n  tasks:\n  - {name: d, command: [x], dynamic: {}}\n",
			want: []problem{{apiv1.CodeRequired, "spec.tasks[0].dynamic.output"}},
		},
		"dynamic output not declared": {
			spec: "spec:\n  tasks:\n  - {name: d, command: [x], dynamic: {output: frag}, outputs: {parameters: [{name: other}]}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].dynamic.output"}},
		},
		"dynamic with train": {
			spec: "spec:\n  tasks:\n  - {name: d, train: {runtime: torch-distributed, command: [x]}, dynamic: {output: frag}, outputs: {parameters: [{name: frag}]}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].dynamic"}},
		},
		"a trigger not in the list": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x]}\n  - {name: b, command: [x], dependsOn: [a], trigger: sometimes}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[1].trigger"}},
		},
		"depends with dependsOn": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x]}\n  - {name: b, command: [x], dependsOn: [a], depends: a}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[1].depends"}},
		},
		"depends with trigger": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x]}\n  - {name: b, command: [x], trigger: allDone, depends: a.Succeeded}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[1].depends"}},
		},
		"depends that does not parse or names an unknown task": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x]}\n  - {name: b, command: [x], depends: a &&}\n  - {name: c, command: [x], depends: zz.Failed}\n",
			want: []problem{{apiv1.CodeExpression, "spec.tasks[1].depends"}, {apiv1.CodeExpression, "spec.tasks[2].depends"}},
		},
		"a when that does not compile": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], when: 'params.x +'}\n  - {name: b, command: [x], when: '1 + 2'}\n",
			want: []problem{{apiv1.CodeExpression, "spec.tasks[0].when"}, {apiv1.CodeExpression, "spec.tasks[1].when"}},
		},
		"a when that reads an unknown task or param": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], when: tasks.zz.succeeded}\n  - {name: b, command: [x], when: 'params.p == \"1\"'}\n",
			want: []problem{{apiv1.CodeExpression, "spec.tasks[0].when"}, {apiv1.CodeExpression, "spec.tasks[1].when"}},
		},
		"a when that reads a task not upstream": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x]}\n  - {name: b, command: [x]}\n  - {name: c, command: [x], dependsOn: [b], when: tasks.a.succeeded && tasks.b.succeeded}\n",
			want: []problem{{apiv1.CodeExpression, "spec.tasks[2].when"}},
		},
		"a when that reads item without forEach": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], when: item == 1}\n",
			want: []problem{{apiv1.CodeExpression, "spec.tasks[0].when"}},
		},
		"{{item}} in a task without forEach": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x, '{{item}}'], env: [{name: I, value: '{{item.index}}'}]}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[0].command[1]"}, {apiv1.CodeTemplate, "spec.tasks[0].env[0].value"}},
		},
		"an image reading item without forEach, or an unknown param": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], image: '{{item.image}}'}\n  - {name: b, command: [x], image: 'repo/{{params.nope}}:1'}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[0].image"}, {apiv1.CodeTemplate, "spec.tasks[1].image"}},
		},
		"a workflow's image reading an unknown param": {
			spec: "spec:\n  image: 'repo/x:{{params.nope}}'\n  tasks:\n  - {name: a, command: [x]}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.image"}},
		},
		"{{item}} read too deep": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x, '{{item.a.b}}'], forEach: {items: [1]}}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[0].command[1]"}},
		},
		"{{item.FIELD}} over a range, or over items that lack the field": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x, '{{item.lr}}', '{{item.index}}'], forEach: {range: {count: 3}}}\n" +
				"  - {name: b, command: [x, '{{item.lr}}'], forEach: {items: [{lr: 1}, {rate: 2}]}}\n" +
				"  - {name: c, command: [x, '{{item.lr}}'], forEach: {items: [{lr: 1}, 5]}}\n" +
				"  - {name: d, command: [x, '{{item.lr}}'], forEach: {items: [{lr: 1}, {lr: 2}]}}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[0].command[1]"}, {apiv1.CodeTemplate, "spec.tasks[1].command[1]"}, {apiv1.CodeTemplate, "spec.tasks[2].command[1]"}},
		},
		"sensors without a file, with a relative path, a short poll or onTimeout succeed": {
			spec: "spec:\n  tasks:\n  - {name: a, sensor: {poll: 1s}}\n" +
				"  - {name: b, sensor: {file: {path: data/READY}}}\n" +
				"  - {name: c, sensor: {file: {path: /x}, poll: 10ms, onTimeout: succeed}}\n" +
				"  - {name: d, sensor: {file: {path: /x}}, command: [x]}\n",
			want: []problem{
				{apiv1.CodeRequired, "spec.tasks[0].sensor.file"},
				{apiv1.CodeInvalidValue, "spec.tasks[1].sensor.file.path"},
				{apiv1.CodeOutOfRange, "spec.tasks[2].sensor.poll"},
				{apiv1.CodeInvalidValue, "spec.tasks[2].sensor.onTimeout"},
				{apiv1.CodeInvalidValue, "spec.tasks[3]"},
			},
		},
		"a dynamic task naming a workflow nobody has": {
			spec: "spec:\n  tasks:\n  - {name: g, command: [x], dynamic: {output: f, workflows: [nobody, '']}, outputs: {parameters: [{name: f}]}}\n",
			want: []problem{{apiv1.CodeRequired, "spec.tasks[0].dynamic.workflows[1]"}, {apiv1.CodeSubworkflow, "spec.tasks[0].dynamic.workflows[0]"}},
		},
		"a map's artifact its items do not declare": {
			spec: "spec:\n  tasks:\n  - {name: m, command: [x], forEach: {range: {count: 2}}, outputs: {artifacts: [{name: model, path: m}]}}\n" +
				"  - {name: u, dependsOn: [m], command: [x, '{{tasks.m.outputs.artifacts.weights}}']}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[1].command[1]"}},
		},
		"{{workflow.status}} outside onExit": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x, '{{workflow.status}}']}\n  onExit:\n  - {name: e, command: [x, '{{workflow.name}}']}\n",
			want: []problem{{apiv1.CodeTemplate, "spec.tasks[0].command[1]"}, {apiv1.CodeTemplate, "spec.onExit[0].command[1]"}},
		},
		"spec.outputs reading an unknown task, or with no value": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], outputs: {parameters: [{name: o}]}}\n  outputs:\n    parameters: [{name: p, value: '{{tasks.zz.outputs.parameters.o}}'}]\n    artifacts: [{name: q, value: ''}]\n",
			want: []problem{{apiv1.CodeTemplate, "spec.outputs.parameters[0].value"}, {apiv1.CodeRequired, "spec.outputs.artifacts[0].value"}},
		},
		"a subworkflow with no name": {
			spec: "spec:\n  tasks:\n  - {name: s, workflow: {name: ''}}\n",
			want: []problem{{apiv1.CodeRequired, "spec.tasks[0].workflow.name"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, errs := compileText(t, header+tc.spec)
			if p != nil {
				t.Errorf("Compile returned a plan for an invalid spec")
			}
			if diff := cmp.Diff(tc.want, problems(t, errs, "wf.yaml", "Workflow/wf")); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerrors: %v", diff, errs)
			}
		})
	}
}

// A gate or subworkflow task with several fields that do not apply
// reports them in the order the task's fields are listed, every time.
func TestFieldsThatDoNotApplyComeInOrder(t *testing.T) {
	t.Parallel()
	spec := "spec:\n  tasks:\n  - {name: g, gate: {approve: {}}, retries: {limit: 1}, resources: {cpu: 1}, admissionTimeout: 1m, timeout: 1m," +
		" env: [{name: A, value: b}], args: [x], workingDir: d, outputs: {parameters: [{name: o}]}, image: i, podTemplate: {}}\n"
	var want []problem
	for _, f := range []string{"retries", "resources", "admissionTimeout", "timeout", "env", "args", "workingDir", "outputs", "image", "podTemplate"} {
		want = append(want, problem{apiv1.CodeInvalidValue, "spec.tasks[0]." + f})
	}
	for range 10 {
		_, errs := compileText(t, header+spec)
		if diff := cmp.Diff(want, problems(t, errs, "wf.yaml", "Workflow/wf")); diff != "" {
			t.Fatalf("problems (-want +got):\n%s", diff)
		}
	}
}

// Workflow outputs are checked parameters first, then artifacts, every time.
func TestWorkflowOutputProblemsComeInOrder(t *testing.T) {
	t.Parallel()
	spec := "spec:\n  tasks: [{name: a, command: [x]}]\n  outputs:\n    parameters: [{name: p, value: ''}]\n    artifacts: [{name: q, value: ''}]\n"
	want := []problem{{apiv1.CodeRequired, "spec.outputs.parameters[0].value"}, {apiv1.CodeRequired, "spec.outputs.artifacts[0].value"}}
	for range 10 {
		_, errs := compileText(t, header+spec)
		if diff := cmp.Diff(want, problems(t, errs, "wf.yaml", "Workflow/wf")); diff != "" {
			t.Fatalf("problems (-want +got):\n%s", diff)
		}
	}
}

func TestCompileMapTasks(t *testing.T) {
	t.Parallel()
	p, errs := compileText(t, header+`spec:
  params: [{name: list}]
  tasks:
  - name: lit
    command: [echo, "{{item}}", "{{item.name}}", "{{item.index}}"]
    forEach: {items: [{name: a}, {name: b}], maxParallel: 1, minSuccesses: 1}
    when: item.name != "b"
  - name: down
    command: [echo]
    forEach: {range: {start: 3, end: -3, step: -2}, minSuccessRatio: 0.3}
  - name: from
    command: [echo]
    forEach: {from: "{{params.list}}"}
`)
	if len(errs) > 0 {
		t.Fatalf("Compile: %v", errs)
	}
	lit, down, from := p.Tasks[0], p.Tasks[1], p.Tasks[2]
	for _, tk := range []Task{lit, down, from} {
		if tk.Kind != apiv1.NodeKindMap || tk.Map == nil || tk.Map.Child.Kind != apiv1.NodeKindCommand || tk.Map.Child.Spec != tk.Spec {
			t.Errorf("task %s: kind %q, map %+v; want a map of itself as a command", tk.Spec.Name, tk.Kind, tk.Map)
		}
	}
	items := func(m *Map) []string {
		var out []string
		for _, it := range m.Items {
			var v any
			if err := json.Unmarshal(it, &v); err != nil {
				t.Fatalf("item %s: %v", it, err)
			}
			b, _ := json.Marshal(v)
			out = append(out, string(b))
		}
		return out
	}
	if diff := cmp.Diff([]string{`{"name":"a"}`, `{"name":"b"}`}, items(lit.Map)); diff != "" {
		t.Errorf("literal items (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"3", "1", "-1", "-3"}, items(down.Map)); diff != "" {
		t.Errorf("range items (-want +got):\n%s", diff)
	}
	if from.Map.Items != nil || from.Map.From != "{{params.list}}" {
		t.Errorf("from: items %v, from %q; want none and the template", from.Map.Items, from.Map.From)
	}
	if lit.Map.MaxParallel != 1 || lit.Map.Need(2) != 1 || down.Map.Need(4) != 2 || from.Map.Need(7) != 7 {
		t.Errorf("maxParallel %d, need %d, %d, %d; want 1, 1, 2, 7", lit.Map.MaxParallel, lit.Map.Need(2), down.Map.Need(4), from.Map.Need(7))
	}
	if lit.When != nil || lit.Map.Child.When == nil {
		t.Error("the map's when reads item: it must be each item's condition, not the map's")
	}
}

func TestMapNeed(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		m     Map
		total int
		want  int
	}{
		"all by default":                       {m: Map{}, total: 5, want: 5},
		"minSuccesses":                         {m: Map{MinSuccesses: 2}, total: 5, want: 2},
		"minSuccesses above the items":         {m: Map{MinSuccesses: 9}, total: 5, want: 5},
		"a ratio rounds up":                    {m: Map{MinRatio: 0.5}, total: 5, want: 3},
		"a ratio that is exact in decimal":     {m: Map{MinRatio: 0.3}, total: 10, want: 3},
		"a ratio of 1":                         {m: Map{MinRatio: 1}, total: 7, want: 7},
		"no items need none":                   {m: Map{MinRatio: 0.5}, total: 0, want: 0},
		"a small ratio still needs one":        {m: Map{MinRatio: 0.01}, total: 3, want: 1},
		"a ratio of 0.7 of 10, not 8 by float": {m: Map{MinRatio: 0.7}, total: 10, want: 7},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tc.m.Need(tc.total); got != tc.want {
				t.Errorf("Need(%d) = %d, want %d", tc.total, got, tc.want)
			}
		})
	}
}

func TestCompileGates(t *testing.T) {
	t.Parallel()
	p, errs := compileText(t, header+`spec:
  tasks:
  - {name: ok, gate: {approve: {message: 'go?'}, timeout: 1h, onTimeout: succeed}}
  - {name: nap, gate: {sleep: {duration: 90s}}}
  - {name: lr, gate: {signal: {type: float, default: "0.1"}}}
  - {name: use, command: [x, "{{tasks.ok.outputs.parameters.approved}}", "{{tasks.lr.outputs.parameters.value}}"], dependsOn: [ok, lr]}
`)
	if len(errs) > 0 {
		t.Fatalf("Compile: %v", errs)
	}
	want := map[string]*Gate{
		"ok":  {Kind: GateApprove, Message: "go?", Timeout: 3600e9, OnTimeout: apiv1.GateTimeoutSucceed},
		"nap": {Kind: GateSleep, Sleep: 90e9, OnTimeout: apiv1.GateTimeoutFail},
		"lr":  {Kind: GateSignal, Type: "float", Default: new("0.1"), OnTimeout: apiv1.GateTimeoutFail},
	}
	for name, g := range want {
		tk := p.Tasks[p.Index[name]]
		if tk.Kind != apiv1.NodeKindGate {
			t.Errorf("%s: kind %q, want gate", name, tk.Kind)
		}
		if diff := cmp.Diff(g, tk.Gate); diff != "" {
			t.Errorf("%s gate (-want +got):\n%s", name, diff)
		}
	}
}

func TestOnExitCompilesIntoOneNodeAfterEveryTask(t *testing.T) {
	t.Parallel()
	p, errs := compileText(t, header+`spec:
  tasks:
  - {name: a, command: [x]}
  - {name: b, command: [x], dependsOn: [a]}
  - {name: c, command: [x]}
  onExit:
  - {name: notify, command: [echo, "{{workflow.status}}", "{{workflow.failures}}"]}
  - {name: clean, command: [x], dependsOn: [notify]}
`)
	if len(errs) > 0 {
		t.Fatalf("Compile: %v", errs)
	}
	i, ok := p.Index[ExitNode]
	if !ok || i != 3 || len(p.Tasks) != 4 {
		t.Fatalf("index %v with %d tasks; want %s as the fourth", p.Index, len(p.Tasks), ExitNode)
	}
	exit := p.Tasks[i]
	if exit.Kind != apiv1.NodeKindExit || exit.Trigger != apiv1.TriggerAllDone || exit.Spec.Name != ExitNode {
		t.Errorf("exit node: kind %q, trigger %q, name %q; want exit, allDone, %s", exit.Kind, exit.Trigger, exit.Spec.Name, ExitNode)
	}
	if diff := cmp.Diff([]int{0, 1, 2}, p.Graph.Upstream(i)); diff != "" {
		t.Errorf("exit node's upstream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0}, p.Graph.Upstream(1)); diff != "" {
		t.Errorf("b's upstream, kept (-want +got):\n%s", diff)
	}
	sub := exit.Sub.Plan
	if diff := cmp.Diff(map[string]int{"notify": 0, "clean": 1}, sub.Index); diff != "" {
		t.Errorf("onExit tasks (-want +got):\n%s", diff)
	}
	if !sub.FailFast || sub.Graph == nil || len(sub.Graph.Upstream(1)) != 1 {
		t.Errorf("onExit plan: failFast %v, graph %v; want fail-fast with clean after notify", sub.FailFast, sub.Graph)
	}
	if _, ok := sub.Index[ExitNode]; ok {
		t.Error("the onExit plan holds an exit node of its own")
	}
}

func TestTriggersAndConditions(t *testing.T) {
	t.Parallel()
	p, errs := compileText(t, header+`spec:
  params: [{name: mode}]
  tasks:
  - {name: a, command: [x], outputs: {parameters: [{name: score}]}}
  - {name: b, command: [x], dependsOn: [a], trigger: oneFailed}
  - {name: c, command: [x], depends: a.Succeeded || b.Failed}
  - {name: d, command: [x], dependsOn: [c], when: 'params.mode == "full" && double(tasks.a.outputs.parameters.score) > 0.5'}
`)
	if len(errs) > 0 {
		t.Fatalf("Compile: %v", errs)
	}
	if p.Tasks[0].Trigger != apiv1.TriggerAllSucceeded || p.Tasks[1].Trigger != apiv1.TriggerOneFailed {
		t.Errorf("triggers %q, %q; want allSucceeded by default, oneFailed", p.Tasks[0].Trigger, p.Tasks[1].Trigger)
	}
	if c := p.Tasks[2]; c.Depends == nil || !cmp.Equal([]int{0, 1}, p.Graph.Upstream(2)) {
		t.Errorf("c: depends %v, upstream %v; want compiled, on a and b", c.Depends, p.Graph.Upstream(2))
	}
	if d := p.Tasks[3]; d.When == nil || !p.Graph.IsAncestor(0, 3) {
		t.Errorf("d: when %v; want compiled, a upstream through c", d.When)
	}
}

// compileFiles checks the documents of one file as kiln validate does.
func compileFiles(t *testing.T, text string) ([]Checked, []*apiv1.Error) {
	t.Helper()
	docs, err := Read("wf.yaml", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	checked, err := CheckFiles([]string{"wf.yaml"}, docs, nil)
	return checked, apiv1.Errors(err)
}

func workflowDoc(name, spec string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: " + name + "}\n" + spec + "---\n"
}

func TestSubworkflows(t *testing.T) {
	t.Parallel()

	train := workflowDoc("train", "spec:\n  params: [{name: lr, default: '0.1'}, {name: epochs}]\n  tasks:\n  - {name: step, command: [x, '{{params.epochs}}']}\n")
	cases := map[string]struct {
		text       string
		want       []problem
		wantObject string
		wantSays   string
	}{
		"a workflow not in the files": {
			text:       workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: trian}}\n  - {name: t, workflow: {name: train, params: [{name: epochs, value: '1'}]}}\n") + train,
			want:       []problem{{apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}},
			wantObject: "Workflow/main",
			wantSays:   `no Workflow named "trian" is in the files (it holds main, train)`,
		},
		"a param the subworkflow does not declare": {
			text:       workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: train, params: [{name: epochs, value: '1'}, {name: lr2, value: '1'}]}}\n") + train,
			want:       []problem{{apiv1.CodeUnknownParam, "spec.tasks[0].workflow.params[1].name"}},
			wantObject: "Workflow/main",
			wantSays:   `workflow "train" declares no param "lr2"`,
		},
		"a param given twice": {
			text:       workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: train, params: [{name: epochs, value: '1'}, {name: epochs, value: '2'}]}}\n") + train,
			want:       []problem{{apiv1.CodeDuplicate, "spec.tasks[0].workflow.params[1].name"}},
			wantObject: "Workflow/main",
		},
		"a required param not given": {
			text:       workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: train, params: [{name: lr, value: '1'}]}}\n") + train,
			want:       []problem{{apiv1.CodeMissingParam, "spec.tasks[0].workflow.params"}},
			wantObject: "Workflow/main",
			wantSays:   `workflow "train" needs param "epochs"`,
		},
		"a param value with an unknown template": {
			text:       workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: train, params: [{name: epochs, value: '{{params.n}}'}]}}\n") + train,
			want:       []problem{{apiv1.CodeTemplate, "spec.tasks[0].workflow.params[0].value"}},
			wantObject: "Workflow/main",
		},
		"a workflow that runs itself": {
			text:       workflowDoc("a", "spec:\n  tasks:\n  - {name: s, workflow: {name: a}}\n"),
			want:       []problem{{apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}},
			wantObject: "Workflow/a",
			wantSays:   "a -> a",
		},
		"recursion through two workflows, run from a third": {
			text: workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: a}}\n") +
				workflowDoc("a", "spec:\n  tasks:\n  - {name: s, workflow: {name: b}}\n") +
				workflowDoc("b", "spec:\n  tasks:\n  - {name: s, workflow: {name: a}}\n"),
			want:       []problem{{apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}},
			wantObject: "Workflow/b",
			wantSays:   "main -> a -> b -> a",
		},
		"recursion through two workflows": {
			text: workflowDoc("a", "spec:\n  tasks:\n  - {name: s, workflow: {name: b}}\n") +
				workflowDoc("b", "spec:\n  tasks:\n  - {name: s, workflow: {name: a}}\n"),
			want:       []problem{{apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}},
			wantObject: "Workflow/b",
			wantSays:   "workflows run each other in a cycle: a -> b -> a",
		},
		"a subworkflow's error is reported once, beside its runner's bare value": {
			text: workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: bad}}\n  - {name: c, command: [x], env: [{name: A, value: no}]}\n") +
				workflowDoc("bad", "spec:\n  tasks:\n  - {name: s, command: [x], dependsOn: [zz]}\n"),
			want:       []problem{{apiv1.CodeBareValue, "spec.tasks[1].env[0].value"}, {apiv1.CodeUnknownDep, "spec.tasks[0].dependsOn[0]"}},
			wantObject: "", // Workflow/main, then Workflow/bad
		},
		"a subworkflow with a bare value is still in the files": {
			text: workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: sub}}\n") +
				workflowDoc("sub", "spec:\n  tasks:\n  - {name: a, command: [x], env: [{name: A, value: no}], dependsOn: [zz]}\n"),
			// Compiled with main first, then sub's own decoding problems.
			want:       []problem{{apiv1.CodeUnknownDep, "spec.tasks[0].dependsOn[0]"}, {apiv1.CodeBareValue, "spec.tasks[0].env[0].value"}},
			wantObject: "Workflow/sub",
		},
		"an error inside a subworkflow names the subworkflow": {
			text: workflowDoc("main", "spec:\n  tasks:\n  - {name: s, workflow: {name: bad}}\n") +
				workflowDoc("bad", "spec:\n  tasks:\n  - {name: s, command: [x], dependsOn: [zz]}\n"),
			want:       []problem{{apiv1.CodeUnknownDep, "spec.tasks[0].dependsOn[0]"}},
			wantObject: "Workflow/bad",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, errs := compileFiles(t, tc.text)
			if diff := cmp.Diff(tc.want, problems(t, errs, "wf.yaml", tc.wantObject)); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\nerrors: %v", diff, errs)
			}
			if !strings.Contains(errs[0].Message, tc.wantSays) {
				t.Errorf("message %q does not say %q", errs[0].Message, tc.wantSays)
			}
		})
	}
}

// A file with a workflow and the workflow it runs holds one runnable
// resource: the one that runs the other.
func TestAWorkflowRunAsASubworkflowIsNotRunnable(t *testing.T) {
	t.Parallel()
	text := workflowDoc("main", `spec:
  tasks:
  - {name: fit, workflow: {name: train, params: [{name: epochs, value: "3"}]}}
  - {name: report, command: [x, "{{tasks.fit.outputs.parameters.loss}}"], dependsOn: [fit]}
`) + workflowDoc("train", `spec:
  params: [{name: epochs}]
  tasks:
  - {name: step, command: [x], outputs: {parameters: [{name: loss}]}}
  outputs:
    parameters: [{name: loss, value: "{{tasks.step.outputs.parameters.loss}}"}]
`)
	checked, errs := compileFiles(t, text)
	if len(errs) > 0 {
		t.Fatalf("CheckFiles: %v", errs)
	}
	if len(checked) != 1 || checked[0].Doc.Object() != "Workflow/main" {
		t.Fatalf("%d runnable documents, want Workflow/main alone", len(checked))
	}
	p := checked[0].Plan
	fit := p.Tasks[p.Index["fit"]]
	if fit.Kind != apiv1.NodeKindSubworkflow || fit.Sub == nil || fit.Sub.Plan == nil || fit.Sub.Plan.Workflow.Metadata.Name != "train" {
		t.Fatalf("fit = %+v; want a subworkflow task running train, compiled", fit)
	}
	if diff := cmp.Diff(&apiv1.Outputs{Parameters: []apiv1.OutputParameter{{Name: "loss"}}}, fit.Outputs()); diff != "" {
		t.Errorf("fit's outputs, the subworkflow's (-want +got):\n%s", diff)
	}
	if uses := p.Uses(); len(uses) != 1 || uses["train"] == nil {
		t.Errorf("Uses() = %v, want train", uses)
	}
	loaded, err := LoadDocuments([]string{"wf.yaml"}, mustRead(t, text), nil, nil)
	if err != nil || loaded.Doc.Object() != "Workflow/main" {
		t.Errorf("LoadDocuments = %v; want Workflow/main loaded", err)
	}
}

func mustRead(t *testing.T, text string) []Document {
	t.Helper()
	docs, err := Read("wf.yaml", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func TestCompileFragment(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		text string
		want []problem
	}{
		"a cycle": {
			text: "tasks:\n- {name: a, command: [x], dependsOn: [b]}\n- {name: b, command: [x], dependsOn: [a]}\n",
			want: []problem{{apiv1.CodeCycle, "tasks[0].dependsOn"}},
		},
		"an unknown field hides no other problem": {
			text: "tasks:\n- {name: a, command: [x], dependsOn: [b], retries: {limt: 1}}\n- {name: b, command: [x], dependsOn: [a]}\n",
			want: []problem{{apiv1.CodeUnknownField, "tasks[0].retries.limt"}, {apiv1.CodeCycle, "tasks[0].dependsOn"}},
		},
		"a workflow's fields are not a fragment's": {
			text: "spec:\n  tasks: []\n",
			want: []problem{{apiv1.CodeUnknownField, "spec"}, {apiv1.CodeRequired, "tasks"}},
		},
		"an unknown param and {{workflow.status}}": {
			text: "tasks:\n- {name: a, command: [x, '{{params.nope}}', '{{workflow.status}}']}\n",
			want: []problem{{apiv1.CodeTemplate, "tasks[0].command[1]"}, {apiv1.CodeTemplate, "tasks[0].command[2]"}},
		},
		"an output reading an unknown task": {
			text: "tasks:\n- {name: a, command: [x]}\noutputs: {parameters: [{name: r, value: '{{tasks.b.outputs.parameters.r}}'}]}\n",
			want: []problem{{apiv1.CodeTemplate, "outputs.parameters[0].value"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := CompileFragment("gen", []byte(tc.text), []string{"size"}, nil, nil)
			if p != nil {
				t.Errorf("CompileFragment returned a plan with its errors")
			}
			if diff := cmp.Diff(tc.want, problems(t, apiv1.Errors(err), "fragment of task gen", "Fragment/gen")); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerrors: %v", diff, err)
			}
		})
	}
}

func TestCompileFragmentReadsTheRunsParams(t *testing.T) {
	t.Parallel()
	p, err := CompileFragment("gen", []byte(`{"tasks": [{"name": "a", "command": ["x", "{{params.size}}"], "forEach": {"range": {"count": 2}}}]}`), []string{"size"}, nil, nil)
	if err != nil {
		t.Fatalf("CompileFragment: %v", err)
	}
	if len(p.Tasks) != 1 || p.Tasks[0].Kind != apiv1.NodeKindMap || !p.FailFast || p.Graph == nil {
		t.Errorf("plan = %+v; want one map task, fail-fast, with a graph", p)
	}
	if _, err := CompileFragment("gen", make([]byte, maxFragment+1), nil, nil, nil); apiv1.CodeOf(err) != apiv1.CodeOutOfRange {
		t.Errorf("a fragment past %d bytes: %v, want %s", maxFragment, err, apiv1.CodeOutOfRange)
	}
}
