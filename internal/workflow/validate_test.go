package workflow

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const header = "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\n"

// problem is what a test expects of one *apiv1.Error.
type problem struct {
	Code  apiv1.Code
	Field string
}

func compileText(t testing.TB, text string) (*Plan, []*apiv1.Error) {
	t.Helper()
	docs, err := Read("wf.yaml", strings.NewReader(text))
	if err != nil {
		return nil, apiv1.Errors(err)
	}
	if len(docs) != 1 {
		t.Fatalf("read %d documents, want 1", len(docs))
	}
	wf, decodeErr := DecodeWorkflow(&docs[0])
	if wf == nil {
		return nil, apiv1.Errors(decodeErr)
	}
	p, err := Compile(&docs[0], wf, nil)
	if decodeErr != nil {
		p = nil
	}
	return p, append(apiv1.Errors(decodeErr), apiv1.Errors(err)...)
}

func TestCompileReportsEveryProblem(t *testing.T) {
	t.Parallel()

	cases := map[string]struct {
		spec string
		want []problem
	}{
		"unknown fields are named with their path": {
			spec: "spec:\n  tasks:\n  - name: a\n    comand: [x]\n    retries: {limt: 1}\n",
			want: []problem{
				{apiv1.CodeUnknownField, "spec.tasks[0].comand"},
				{apiv1.CodeUnknownField, "spec.tasks[0].retries.limt"},
				{apiv1.CodeRequired, "spec.tasks[0].command"},
			},
		},
		"wrong type": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], retries: {limit: many}}\n",
			want: []problem{{apiv1.CodeParse, "spec.tasks[0].retries.limit"}},
		},
		"YAML 1.1 booleans where strings belong hide no other error": {
			spec: "spec:\n  tasks:\n  - {name: n, command: [x], env: [{name: A, value: y}, {name: B, value: off}]}\n  - {name: b, command: [x], dependsOn: [zz]}\n",
			want: []problem{
				{apiv1.CodeBareValue, "spec.tasks[0].name"},
				{apiv1.CodeBareValue, "spec.tasks[0].env[0].value"},
				{apiv1.CodeBareValue, "spec.tasks[0].env[1].value"},
				{apiv1.CodeUnknownDep, "spec.tasks[1].dependsOn[0]"},
			},
		},
		"wrong types at depth keep their list indices": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x]}\n  - {name: b, command: [x]}\n  - {name: c, command: echo, env: [{name: A, valueFrom: [x]}]}\n",
			want: []problem{
				{apiv1.CodeParse, "spec.tasks[2].command"},
				{apiv1.CodeParse, "spec.tasks[2].env[0].valueFrom"},
			},
		},
		"numbers too large for their type": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], priority: 1e10, retries: {limit: 1e400}}\n  - {name: b, command: [x], retries: {limit: 1.5}}\n",
			want: []problem{
				{apiv1.CodeOutOfRange, "spec.tasks[0].priority"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].retries.limit"},
				{apiv1.CodeParse, "spec.tasks[1].retries.limit"},
			},
		},
		"a field spelt in another case is unknown, not taken": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], Command: [rm]}\n",
			want: []problem{{apiv1.CodeUnknownField, "spec.tasks[0].Command"}},
		},
		"a number where a string belongs": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x, 1.10]}\n",
			want: []problem{{apiv1.CodeBareValue, "spec.tasks[0].command[1]"}},
		},
		"unknown fields and wrong types hide no other error": {
			spec: "spec:\n  failFast: sometimes\n  tasks:\n  - {name: a, comand: [x]}\n",
			want: []problem{
				{apiv1.CodeParse, "spec.failFast"},
				{apiv1.CodeUnknownField, "spec.tasks[0].comand"},
				{apiv1.CodeRequired, "spec.tasks[0].command"},
			},
		},
		"duplicate names, unknown dependency, empty command": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x]}\n  - {name: a, command: []}\n  - {name: c, command: [x], dependsOn: [zz]}\n",
			want: []problem{
				{apiv1.CodeRequired, "spec.tasks[1].command"},
				{apiv1.CodeDuplicate, "spec.tasks[1].name"},
				{apiv1.CodeUnknownDep, "spec.tasks[2].dependsOn[0]"},
			},
		},
		"cycle": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], dependsOn: [b]}\n  - {name: b, command: [x], dependsOn: [a]}\n",
			want: []problem{{apiv1.CodeCycle, "spec.tasks[0].dependsOn"}},
		},
		"names that are not DNS-1123 labels": {
			spec: "spec:\n  tasks:\n  - {name: Prep_Data, command: [x]}\n",
			want: []problem{{apiv1.CodeInvalidName, "spec.tasks[0].name"}},
		},
		"bad durations and quantities": {
			spec: "spec:\n  timeout: soon\n  tasks:\n  - name: a\n    command: [x]\n    timeout: -1s\n    retries: {limit: 2, backoff: {duration: 5x, factor: 0.5}}\n    resources: {cpu: lots, memory: 2Gb, gpu: 0.5}\n",
			want: []problem{
				{apiv1.CodeDuration, "spec.timeout"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].timeout"},
				{apiv1.CodeDuration, "spec.tasks[0].retries.backoff.duration"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].retries.backoff.factor"},
				{apiv1.CodeQuantity, "spec.tasks[0].resources.cpu"},
				{apiv1.CodeQuantity, "spec.tasks[0].resources.memory"},
				{apiv1.CodeQuantity, "spec.tasks[0].resources.gpu"},
			},
		},
		"numbers out of range": {
			spec: "spec:\n  timeout: 8761h\n  tasks:\n  - name: a\n    command: [x]\n    priority: 2000000000\n    admissionTimeout: 0s\n" +
				"    retries: {limit: -1, backoff: {duration: 1s, factor: 1000, max: -5s}}\n" +
				"    resources: {cpu: '9223372036854775807', memory: 1e400, gpu: 1E2147483648}\n",
			want: []problem{
				{apiv1.CodeOutOfRange, "spec.timeout"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].priority"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].admissionTimeout"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].retries.limit"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].retries.backoff.max"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].retries.backoff.factor"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].resources.cpu"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].resources.memory"},
				{apiv1.CodeOutOfRange, "spec.tasks[0].resources.gpu"},
			},
		},
		"template references": {
			spec: "spec:\n  params: [{name: count}]\n  tasks:\n  - name: a\n    command: [x, '{{params.m}}', '{{params.count}}']\n    outputs: {parameters: [{name: out}]}\n" +
				"  - name: b\n    command: [x, '{{tasks.a.outputs.parameters.out}}']\n" +
				"  - name: c\n    dependsOn: [a]\n    command: [x, '{{tasks.a.outputs.parameters.nope}}', '{{tasks.a.outputs.parameters.out}}', '{{run.id}}', '{{oops}}']\n",
			want: []problem{
				{apiv1.CodeTemplate, "spec.tasks[0].command[1]"},
				{apiv1.CodeTemplate, "spec.tasks[1].command[1]"},
				{apiv1.CodeTemplate, "spec.tasks[2].command[1]"},
				{apiv1.CodeTemplate, "spec.tasks[2].command[4]"},
			},
		},
		"reserved environment variables": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], env: [{name: KILN_OUTPUTS, value: /}]}\n",
			want: []problem{{apiv1.CodeReservedEnv, "spec.tasks[0].env[0].name"}},
		},
		"artifact escaping its directory": {
			spec: "spec:\n  tasks:\n  - {name: a, command: [x], outputs: {artifacts: [{name: m, path: ../m.pt}]}}\n",
			want: []problem{{apiv1.CodeInvalidValue, "spec.tasks[0].outputs.artifacts[0].path"}},
		},
		"no tasks": {
			spec: "spec: {tasks: []}\n",
			want: []problem{{apiv1.CodeRequired, "spec.tasks"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, errs := compileText(t, header+tc.spec)
			if p != nil {
				t.Errorf("Compile returned a plan for an invalid spec")
			}
			var got []problem
			for _, e := range errs {
				got = append(got, problem{e.Code, e.Field})
				if e.File != "wf.yaml" || e.Object != "Workflow/wf" {
					t.Errorf("error %q does not name file and object", e)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCycleMessageShowsThePath(t *testing.T) {
	t.Parallel()
	_, errs := compileText(t, header+"spec:\n  tasks:\n  - {name: a, command: [x], dependsOn: [b]}\n  - {name: b, command: [x], dependsOn: [a]}\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "a -> b -> a") {
		t.Fatalf("errors = %v, want one naming the cycle a -> b -> a", errs)
	}
}

func TestCompileValidWorkflow(t *testing.T) {
	t.Parallel()
	p, errs := compileText(t, header+`spec:
  failFast: false
  timeout: 1h
  params: [{name: epochs, default: "3"}]
  tasks:
  - name: prepare
    command: [python3, prep.py, "{{outputs.dir}}"]
    outputs: {parameters: [{name: rows}]}
  - name: train
    dependsOn: [prepare]
    command: [python3, train.py, --epochs, "{{params.epochs}}", "{{tasks.prepare.outputs.parameters.rows}}"]
    retries: {limit: 3, backoff: {duration: 1s, factor: 3, max: 5s}}
    resources: {cpu: 500m, memory: 1Gi, gpu: 1}
`)
	if len(errs) > 0 {
		t.Fatalf("Compile: %v", errs)
	}
	if p.FailFast || p.Timeout != time.Hour {
		t.Errorf("FailFast, Timeout = %v, %v; want false, 1h", p.FailFast, p.Timeout)
	}
	train := p.Tasks[p.Index["train"]]
	if train.Request.MilliCPU != 500 || train.Request.Memory != 1<<30 || train.Request.GPU != 1 {
		t.Errorf("train request = %+v", train.Request)
	}
	delays := []time.Duration{train.Retry.Delay(2), train.Retry.Delay(3), train.Retry.Delay(4)}
	if diff := cmp.Diff([]time.Duration{time.Second, 3 * time.Second, 5 * time.Second}, delays); diff != "" {
		t.Errorf("retry delays (-want +got):\n%s", diff)
	}
	if p.Tasks[p.Index["prepare"]].Request.MilliCPU != 1000 {
		t.Errorf("a task without resources takes %d millicores, want 1000", p.Tasks[0].Request.MilliCPU)
	}
}

func TestResolveParams(t *testing.T) {
	t.Parallel()
	docs, _ := Read("wf.yaml", strings.NewReader(header+"spec:\n  params: [{name: a, default: x}, {name: b}]\n  tasks: [{name: t, command: [x]}]\n"))
	wf, err := DecodeWorkflow(&docs[0])
	if err != nil {
		t.Fatal(err)
	}
	got, err := ResolveParams(&docs[0], wf, map[string]string{"b": "y"})
	if err != nil || got["a"] != "x" || got["b"] != "y" {
		t.Errorf("ResolveParams = %v, %v; want a=x b=y", got, err)
	}
	_, err = ResolveParams(&docs[0], wf, map[string]string{"c": "z"})
	codes := []apiv1.Code{}
	for _, e := range apiv1.Errors(err) {
		codes = append(codes, e.Code)
	}
	if diff := cmp.Diff([]apiv1.Code{apiv1.CodeUnknownParam, apiv1.CodeMissingParam}, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
}

func TestReadSeveralDocuments(t *testing.T) {
	t.Parallel()
	docs, err := Read("f.yaml", strings.NewReader(header+"spec: {tasks: [{name: a, command: [x]}]}\n---\n---\n"+strings.Replace(header, "wf", "wf2", 1)+"spec: {tasks: [{name: a, command: [x]}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[1].Name != "wf2" || docs[1].Index != 1 {
		t.Fatalf("docs = %+v, want two, the second named wf2", docs)
	}
}

func TestBareValueSaysWhatItWasReadAsAndHowToQuoteIt(t *testing.T) {
	t.Parallel()
	_, errs := compileText(t, header+"spec:\n  tasks:\n  - {name: a, command: [x], env: [{name: A, value: n}]}\n")
	if len(errs) != 1 {
		t.Fatalf("errors = %v, want one", errs)
	}
	got := errs[0].Error()
	for _, want := range []string{"KLN-1021", "spec.tasks[0].env[0].value", "n is read as the boolean false", `quote it: "n"`} {
		if !strings.Contains(got, want) {
			t.Errorf("error %q does not say %q", got, want)
		}
	}
}

func TestFilesHoldDocumentsAndOneRunnableEach(t *testing.T) {
	t.Parallel()
	if _, err := Read("empty.yaml", strings.NewReader("# nothing here\n---\n")); apiv1.CodeOf(err) != apiv1.CodeRunnable ||
		!strings.Contains(err.Error(), "empty.yaml: the file holds no document") {
		t.Errorf("an empty file: %v, want %s naming it", err, apiv1.CodeRunnable)
	}
	two := header + "spec: {tasks: [{name: a, command: [x]}]}\n---\n" + strings.Replace(header, "wf", "wf2", 1) + "spec: {tasks: [{name: a, command: [x]}]}\n"
	docs, err := Read("two.yaml", strings.NewReader(two))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := CheckFiles([]string{"two.yaml"}, docs, nil)
	if len(plans) != 2 || apiv1.CodeOf(err) != apiv1.CodeRunnable || !strings.Contains(err.Error(), "Workflow/wf, Workflow/wf2") {
		t.Errorf("two workflows in one file: %d plans, %v; want both checked and %s naming them", len(plans), err, apiv1.CodeRunnable)
	}
}

func TestTrainJobErrorsNameItsOwnFields(t *testing.T) {
	t.Parallel()
	text := `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {command: ["{{params.lr}}"], numNodes: 0}
  runPolicy: {backoffLimit: -1, activeDeadlineSeconds: 0}
`
	docs, err := Read("tj.yaml", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	_, err = CheckDocuments(docs, nil)
	var got []problem
	for _, e := range apiv1.Errors(err) {
		got = append(got, problem{e.Code, e.Field})
		if strings.Contains(e.Error(), "spec.tasks") || strings.Contains(e.Error(), "spec.params") || strings.Contains(e.Error(), `"0s"`) {
			t.Errorf("error %q speaks of the workflow a TrainJob runs as, not the TrainJob", e)
		}
	}
	want := []problem{
		{apiv1.CodeOutOfRange, "spec.runPolicy.backoffLimit"},
		{apiv1.CodeOutOfRange, "spec.runPolicy.activeDeadlineSeconds"},
		{apiv1.CodeOutOfRange, "spec.trainer.numNodes"},
		{apiv1.CodeTemplate, "spec.trainer.command[0]"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
