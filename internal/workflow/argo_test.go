package workflow

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	argov1 "kiln.dev/kiln/api/argo/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoFile converts the Argo test document name, checking the result as
// kiln would, and decodes the workflows it becomes, by name.
func argoFile(t *testing.T, name string) (map[string]*apiv1.Workflow, []Ignored) {
	t.Helper()
	path := filepath.Join("testdata", "argo", name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return argoText(t, path, string(b))
}

func argoText(t *testing.T, path, text string) (map[string]*apiv1.Workflow, []Ignored) {
	t.Helper()
	docs, err := Read(path, strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	out, ignored, err := Convert([]string{path}, docs)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	wfs := map[string]*apiv1.Workflow{}
	for _, d := range out {
		wf := &apiv1.Workflow{}
		if err := json.Unmarshal(d.JSON, wf); err != nil {
			t.Fatal(err)
		}
		wfs[d.Name] = wf
	}
	return wfs, ignored
}

// argoErr converts text, which must be refused, and returns the errors.
func argoErr(t *testing.T, text string) []*apiv1.Error {
	t.Helper()
	docs, err := Read("wf.yaml", strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	_, _, err = Convert([]string{"wf.yaml"}, docs)
	if err == nil {
		t.Fatal("Convert accepted the document")
	}
	return apiv1.Errors(err)
}

func TestArgoContainerBecomesOneTaskWithTheWorkflowsParams(t *testing.T) {
	t.Parallel()
	wfs, ignored := argoFile(t, "hello.yaml")
	wf := wfs["hello"]
	if wf == nil {
		t.Fatalf("no workflow named after generateName: %v", wfs)
	}
	want := []apiv1.Task{{Name: "say", Command: []string{"echo"}, Args: []string{"{{params.greeting}}", "{{run.name}}"}, Image: "busybox"}}
	if diff := cmp.Diff(want, wf.Spec.Tasks); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if len(wf.Spec.Params) != 1 || *wf.Spec.Params[0].Default != "hi there" {
		t.Errorf("params = %+v, want greeting defaulting to the argument's value", wf.Spec.Params)
	}
	assertIgnored(t, ignored, "metadata.generateName", "")
	assertIgnored(t, ignored, "spec.templates[0].container.image", backendLocal)
}

// assertIgnored fails unless field is named as ignored on backend ("":
// on every backend).
func assertIgnored(t *testing.T, ignored []Ignored, field, backend string) {
	t.Helper()
	for _, i := range ignored {
		if i.Field == field && (backend == "" && len(i.Backends) == 0 || slices.Contains(i.Backends, backend)) {
			return
		}
	}
	t.Errorf("%s is not named as ignored (on %q): %+v", field, backend, ignored)
}

func TestArgoStepsRunGroupAfterGroup(t *testing.T) {
	t.Parallel()
	wfs, _ := argoFile(t, "steps.yaml")
	got := map[string]string{}
	for _, task := range wfs["steps"].Spec.Tasks {
		got[task.Name] = task.Depends + " | " + strings.Join(task.Args, " ")
	}
	want := map[string]string{"first": " | echo one", "second-a": "first | echo two-a", "second-b": "first | echo two-b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("depends | args (-want +got):\n%s", diff)
	}
}

func TestArgoScriptKeepsItsResultForTheConditions(t *testing.T) {
	t.Parallel()
	wfs, _ := argoFile(t, "coinflip.yaml")
	tasks := wfs["coin"].Spec.Tasks
	toss := tasks[0]
	if toss.Outputs == nil || toss.Outputs.Parameters[0].Name != "result" {
		t.Errorf("toss declares %+v, want its result", toss.Outputs)
	}
	// sh -c WRAPPER argo SOURCE python3: the source is the program's last argument.
	if len(toss.Command) != 6 || toss.Command[0] != "sh" || !strings.Contains(toss.Command[4], "import random") || toss.Command[5] != "python3" {
		t.Errorf("toss runs %q", toss.Command)
	}
	if want := `tasks["toss"].outputs.parameters["result"] == "heads"`; tasks[1].When != want {
		t.Errorf("won's condition = %s, want %s", tasks[1].When, want)
	}
}

func TestArgoNestedDAGIsAGeneratedSubworkflow(t *testing.T) {
	t.Parallel()
	wfs, _ := argoFile(t, "dag-nested.yaml")
	root, inner := wfs["nest"], wfs["nest-inner"]
	if root == nil || inner == nil {
		t.Fatalf("translated into %v, want nest and nest-inner", wfs)
	}
	wantCall := &apiv1.SubWorkflow{Name: "nest-inner", Params: []apiv1.ParamValue{{Name: "tag", Value: "A"}, {Name: "workflow-parameters-who", Value: "{{params.who}}"}}}
	if diff := cmp.Diff(wantCall, root.Spec.Tasks[0].Workflow); diff != "" {
		t.Errorf("a's workflow (-want +got):\n%s", diff)
	}
	if got := inner.Spec.Tasks[0].Command[len(inner.Spec.Tasks[0].Command)-1]; got != "echo {{params.tag}}-{{params.workflow-parameters-who}} > /tmp/argo-nest-v.txt" {
		t.Errorf("write runs %q", got)
	}
	want := &apiv1.WorkflowOutputs{Parameters: []apiv1.WorkflowOutput{{Name: "out", Value: "{{tasks.write.outputs.parameters.v}}"}}}
	if diff := cmp.Diff(want, inner.Spec.Outputs); diff != "" {
		t.Errorf("inner's outputs (-want +got):\n%s", diff)
	}
}

func TestArgoLoops(t *testing.T) {
	t.Parallel()
	wfs, _ := argoFile(t, "loops.yaml")
	by := map[string]apiv1.Task{}
	for _, task := range wfs["loops"].Spec.Tasks {
		by[task.Name] = task
	}
	items := func(f *apiv1.ForEach) string {
		var s []string
		for _, i := range f.Items {
			s = append(s, string(i))
		}
		return strings.Join(s, ",")
	}
	if got := items(by["seq"].ForEach); got != `"user01","user02","user03"` {
		t.Errorf("withSequence with a format became items %s", got)
	}
	if got := by["maps"].ForEach; got.MaxParallel != 2 || len(got.Items) != 2 {
		t.Errorf("withItems became %+v, want 2 items, at most 2 at once (the template's parallelism)", got)
	}
	if got := by["maps"].Args; got != nil || by["maps"].Command[1] != "{{item.os}}-{{item.ver}}" {
		t.Errorf("maps runs %q", by["maps"].Command)
	}
	if got := by["fromparam"].ForEach.From; got != "{{params.list}}" {
		t.Errorf("withParam of a workflow parameter became from %q", got)
	}
	if got := by["fromresult"].ForEach.From; got != "{{tasks.gen.outputs.parameters.result}}" {
		t.Errorf("withParam of a result became from %q", got)
	}
}

func TestArgoRetriesAndDeadlines(t *testing.T) {
	t.Parallel()
	wfs, _ := argoFile(t, "retry.yaml")
	wf := wfs["retry"]
	two := 2.0
	want := &apiv1.RetryStrategy{Limit: 3, Backoff: &apiv1.Backoff{Duration: "1s", Factor: &two, Max: "1m"}}
	if diff := cmp.Diff(want, wf.Spec.Tasks[0].Retries); diff != "" {
		t.Errorf("retries (-want +got):\n%s", diff)
	}
	if !strings.Contains(wf.Spec.Tasks[0].Command[2], "{{task.retries}}") {
		t.Errorf("{{retries}} is not kiln's {{task.retries}}: %q", wf.Spec.Tasks[0].Command)
	}
	if wf.Spec.Timeout != "300s" {
		t.Errorf("timeout = %q, want activeDeadlineSeconds as 300s", wf.Spec.Timeout)
	}
	if g := wf.Spec.Tasks[1].Gate; g == nil || g.Sleep == nil || g.Sleep.Duration != "1s" {
		t.Errorf("suspend became %+v, want a sleep of 1s", g)
	}
}

func TestArgoExitHandlersAndContinueOn(t *testing.T) {
	t.Parallel()
	wfs, ignored := argoFile(t, "exitcode.yaml")
	wf := wfs["exitcode"]
	names := []string{}
	for _, task := range wf.Spec.Tasks {
		names = append(names, task.Name+"<"+task.Depends+">")
	}
	want := []string{"fail<>", "fail-onexit<fail || fail.Failed || fail.Skipped>", "report<(fail || fail.Failed)>"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if len(wf.Spec.OnExit) != 1 || wf.Spec.OnExit[0].When != `workflow.status == "Succeeded"` {
		t.Errorf("onExit = %+v", wf.Spec.OnExit)
	}
	if got := wf.Spec.Tasks[2].Command; got[len(got)-1] != "echo code={{tasks.fail.outputs.parameters.exitCode}}; test {{tasks.fail.outputs.parameters.exitCode}} = 3" {
		t.Errorf("report runs %q", got)
	}
	assertIgnored(t, ignored, "spec.templates[0].steps[0][0].continueOn", "")
}

func TestArgoArtifactsAreCopiedInAndOut(t *testing.T) {
	t.Parallel()
	wfs, _ := argoFile(t, "artifacts.yaml")
	tasks := wfs["art"].Spec.Tasks
	if want := []apiv1.Artifact{{Name: "note", Path: "note"}}; !cmp.Equal(want, tasks[0].Outputs.Artifacts) {
		t.Errorf("make's artifacts = %+v", tasks[0].Outputs.Artifacts)
	}
	if !strings.Contains(tasks[0].Command[2], `cp -r -- '/tmp/argo-art-out.txt' "$KILN_OUTPUTS/note"`) || !strings.Contains(tasks[0].Command[2], `case "$KILN_OUTPUTS/" in '/tmp/argo-art-out.txt'/*)`) {
		t.Errorf("make does not keep its artifact: %q", tasks[0].Command[2])
	}
	if !strings.Contains(tasks[1].Command[2], `cp -r -- '{{tasks.make.outputs.artifacts.note}}' '/tmp/argo-art-in/msg.txt'`) {
		t.Errorf("read does not put its input in place: %q", tasks[1].Command[2])
	}
	if got := tasks[1].Command[len(tasks[1].Command)-1]; got != "cat /tmp/argo-art-in/msg.txt" {
		t.Errorf("{{inputs.artifacts.msg.path}} became %q", got)
	}
}

func TestArgoWhenBecomesCEL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"{{steps.flip.outputs.result}} == heads", `tasks["flip"].outputs.parameters["result"] == "heads"`},
		{"{{tasks.flip.outputs.result}} != 'tails'", `tasks["flip"].outputs.parameters["result"] != "tails"`},
		{"{{inputs.parameters.should-print}} == true", `params["should-print"] == "true"`},
		{"{{workflow.parameters.n}} > 5", `double(params["n"]) > 5.0`},
		{"{{steps.n.outputs.result}} <= 2.5 && {{workflow.parameters.n}} == 3", `double(tasks["n"].outputs.parameters["result"]) <= 2.5 && double(params["n"]) == 3.0`},
		{"{{item.evenness}} == even", `item["evenness"] == "even"`},
		{"{{item}} =~ '^a.*'", `(item).matches("^a.*")`},
		{"{{workflow.parameters.x}} !~ b", `!(params["x"]).matches("b")`},
		{"!({{steps.a.exitCode}} == 0 || {{workflow.status}} == Failed)", `! ( double(tasks["a"].outputs.parameters["exitCode"]) == 0.0 || workflow.status == "Failed" )`},
		{"{{workflow.parameters.env}}-x == prod-x", `params["env"] + "-x" == "prod-x"`},
		{"{{steps.A.status}} == Succeeded", `tasks["a"].phase == "Succeeded"`},
		{"{{= inputs.parameters['should-print'] == 'true' }}", `params["should-print"] == "true"`},
		{`{{= steps.flip.outputs.result == "heads" and not (workflow.parameters.x != 'y') }}`, `tasks["flip"].outputs.parameters["result"] == "heads" && ! ( params["x"] != "y" )`},
	} {
		a := newArgoConv(&Document{File: "wf.yaml"}, nil, &argoMeta, &argoSpec, apiv1.KindWorkflow)
		o := a.newOut("wf", false)
		got := a.when(a.bodyScope(o, "when"), "when", c.in)
		if len(a.c.errs) > 0 || got != c.want {
			t.Errorf("when %s\n got %s (%v)\nwant %s", c.in, got, a.c.errs, c.want)
		}
	}
}

var (
	argoMeta = argov1.ObjectMeta{Name: "wf"}
	argoSpec = argov1.WorkflowSpec{}
)

func TestArgoWhenKilnCannotReadIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"{{=jsonpath(workflow.parameters.json, '$[0].value') == 'true'}}",
		"{{= sprig.trim(inputs.parameters.x) == 'a' }}",
		"{{workflow.duration}} > 5",
		"{{workflow.parameters.x} == 'a'",
	} {
		a := newArgoConv(&Document{File: "wf.yaml"}, nil, &argoMeta, &argoSpec, apiv1.KindWorkflow)
		o := a.newOut("wf", false)
		a.when(a.bodyScope(o, "x"), "spec.templates[0].steps[0][0].when", in)
		errs := apiv1.Errors(joinErrs(a.c.errs))
		if len(errs) != 1 || errs[0].Code != apiv1.CodeUnsupported || errs[0].Field != "spec.templates[0].steps[0][0].when" {
			t.Errorf("when %s: errors %v, want one KLN-1026 naming the when", in, errs)
		}
	}
}

func TestArgoRefusalsNameTheFieldAsWritten(t *testing.T) {
	t.Parallel()
	head := "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\nspec:\n  entrypoint: main\n  templates:\n"
	for _, c := range []struct {
		name, body string
		code       apiv1.Code
		field      string
	}{
		{"sidecars", "  - name: main\n    container: {image: a, command: [x]}\n    sidecars: [{name: s, image: b}]\n", apiv1.CodeUnsupported, "spec.templates[0].sidecars"},
		{"daemon", "  - name: main\n    daemon: true\n    container: {image: a, command: [x]}\n", apiv1.CodeUnsupported, "spec.templates[0].daemon"},
		{"resource", "  - name: main\n    resource: {action: create}\n", apiv1.CodeUnsupported, "spec.templates[0].resource"},
		{"expression output", "  - name: main\n    container: {image: a, command: [x]}\n    outputs:\n      parameters: [{name: p, valueFrom: {expression: 'a'}}]\n", apiv1.CodeUnsupported, "spec.templates[0].outputs.parameters[0].valueFrom"},
		{"retry expression", "  - name: main\n    retryStrategy: {limit: 2, expression: 'x'}\n    container: {image: a, command: [x]}\n", apiv1.CodeUnsupported, "spec.templates[0].retryStrategy.expression"},
		{"s3 input", "  - name: main\n    inputs:\n      artifacts: [{name: i, path: /tmp/i, s3: {key: k}}]\n    container: {image: a, command: [x]}\n", apiv1.CodeUnsupported, "spec.templates[0].inputs.artifacts[0]"},
		{"recursion", "  - name: main\n    steps:\n    - - {name: again, template: main}\n", apiv1.CodeUnsupported, "spec.templates[0]"},
		{
			"aggregation", "  - name: main\n    steps:\n    - - {name: a, template: c, withItems: [1, 2]}\n    - - {name: b, template: c, withParam: '{{steps.a.outputs.parameters}}'}\n  - name: c\n    container: {image: a, command: [x]}\n",
			apiv1.CodeUnsupported, "spec.templates[0].steps[1][0].withParam",
		},
		{
			"gathered objects", "  - name: main\n    steps:\n    - - {name: a, template: c, withItems: [1, 2]}\n    - - {name: b, template: c, withParam: '{{steps.a.outputs.result}}', when: '{{item.x}} == y'}\n  - name: c\n    container: {image: a, command: [x]}\n",
			apiv1.CodeUnsupported, "spec.templates[0].steps[1][0].withParam",
		},
		{"unknown template", "  - name: main\n    steps:\n    - - {name: a, template: nope}\n", apiv1.CodeArgoTemplate, "spec.templates[0].steps[0][0].template"},
		{
			"missing input", "  - name: main\n    steps:\n    - - {name: a, template: c}\n  - name: c\n    inputs: {parameters: [{name: p}]}\n    container: {image: a, command: [x]}\n",
			apiv1.CodeRequired, "spec.templates[1].inputs.parameters[0]",
		},
		{"kiln's own check", "  - name: main\n    steps:\n    - - {name: nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn, template: c}\n  - name: c\n    container: {image: a, command: [x]}\n", apiv1.CodeInvalidName, "spec.templates[0].steps[0][0].name"},
		{"unknown field", "  - name: main\n    container: {image: a, command: [x]}\n    sidecar: []\n", apiv1.CodeUnknownField, "spec.templates[0].sidecar"},
	} {
		errs := argoErr(t, head+c.body)
		found := false
		for _, e := range errs {
			found = found || (e.Code == c.code && e.Field == c.field)
		}
		if !found {
			t.Errorf("%s: errors %v, want %s on %s", c.name, errs, c.code, c.field)
		}
	}
}

func TestArgoKnownFieldsAreNamedNotMisspelt(t *testing.T) {
	t.Parallel()
	wfs, ignored := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  serviceAccountName: argo
  podGC: {strategy: OnPodCompletion}
  tolerations: [{key: gpu, operator: Exists}]
  ttlStrategy: {secondsAfterCompletion: 60}
  templates:
  - name: main
    memoize: {key: k, cache: {configMap: {name: c}}}
    nodeSelector: {a: b}
    container: {image: a, command: [x], imagePullPolicy: Always}
`)
	if got := wfs["wf"].Spec.TTLSecondsAfterFinished; got == nil || *got != 60 {
		t.Errorf("ttlStrategy became %v", got)
	}
	for _, f := range []string{"spec.serviceAccountName", "spec.podGC", "spec.templates[0].memoize", "spec.templates[0].container.imagePullPolicy"} {
		assertIgnored(t, ignored, f, "")
	}
	// Pods' placement goes to Kubernetes, not to local processes.
	assertIgnored(t, ignored, "spec.templates[0].nodeSelector", backendLocal)
	assertIgnored(t, ignored, "spec.tolerations", backendLocal)
	pt := wfs["wf"].Spec.Tasks[0].PodTemplate
	if pt == nil || pt.Spec.NodeSelector["a"] != "b" || len(pt.Spec.Tolerations) != 1 {
		t.Errorf("the task's pod template %+v, want the template's node selector and the workflow's toleration", pt)
	}
}

func TestArgoWorkflowTemplateStoresEachTemplate(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "argo", "templates.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Read(path, strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Translate(docs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range out {
		if d.Kind != apiv1.KindWorkflowTemplate {
			t.Errorf("%s is a %s, want a WorkflowTemplate to store", d.Name, d.Kind)
		}
		names = append(names, d.Name)
	}
	if want := []string{"lib", "lib-hello", "lib-pair"}; !cmp.Equal(want, names) {
		t.Errorf("stored %v, want %v", names, want)
	}
	if _, err := CheckApply([]string{path}, out, nil, nil); err != nil {
		t.Errorf("kiln apply refuses the translation: %v", err)
	}
}

func TestArgoTemplateRefFindsATemplateInTheSameFiles(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "argo", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wfs, ignored := argoText(t, "both.yaml", read("templates.yaml")+"---\n"+read("templateref.yaml"))
	// The template's own ignored fields are named, though its entrypoint is left out.
	assertIgnored(t, ignored, "spec.templates[0].container.image", backendLocal)
	if _, ok := wfs["lib"]; ok {
		t.Errorf("the template's entrypoint, which nothing runs, is in the run's files")
	}
	root := wfs["uses-lib"]
	if root == nil || wfs["lib-hello"] == nil || wfs["lib-pair"] == nil {
		t.Fatalf("translated into %v, want uses-lib, lib-hello and lib-pair", slices.Collect(maps.Keys(wfs)))
	}
	want := &apiv1.SubWorkflow{Name: "lib-hello", Params: []apiv1.ParamValue{{Name: "msg", Value: "hello"}}}
	if diff := cmp.Diff(want, root.Spec.Tasks[0].Workflow); diff != "" {
		t.Errorf("greet runs (-want +got):\n%s", diff)
	}
}

func TestArgoWorkflowTemplateRefRunsTheStoredTemplate(t *testing.T) {
	t.Parallel()
	docs, err := Read("wf.yaml", strings.NewReader(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: whole-}
spec:
  arguments:
    parameters: [{name: who, value: caller}]
  workflowTemplateRef: {name: lib}
`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Translate(docs)
	if err != nil {
		t.Fatal(err)
	}
	wf := &apiv1.Workflow{}
	if err := json.Unmarshal(out[0].JSON, wf); err != nil {
		t.Fatal(err)
	}
	want := []apiv1.Task{{Name: "lib", Workflow: &apiv1.SubWorkflow{Name: "lib", Params: []apiv1.ParamValue{{Name: "who", Value: "{{params.who}}"}}}}}
	if diff := cmp.Diff(want, wf.Spec.Tasks); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
}

func TestArgoNamesBecomeKilnsAndExitHooksExitHandlers(t *testing.T) {
	t.Parallel()
	wfs, ignored := argoFile(t, "diamond.yaml")
	wf := wfs["diamond"]
	got := map[string]string{}
	for _, task := range wf.Spec.Tasks {
		got[task.Name] = task.Depends
	}
	want := map[string]string{
		"a": "", "b": "a", "c": "a.Succeeded", "d-last": "b && (c.Failed || c.Succeeded)",
		"d-last-onexit": "d-last || d-last.Failed || d-last.Skipped",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("depends (-want +got):\n%s", diff)
	}
	if got := wf.Spec.Tasks[1].Command; !strings.Contains(got[len(got)-1], "echo {{tasks.a.outputs.parameters.result}} | tee /tmp/argo-diamond-copy.txt") {
		t.Errorf("b runs %q", got)
	}
	if len(wf.Spec.OnExit) != 1 || wf.Spec.OnExit[0].Name != "note" {
		t.Errorf("spec.hooks.exit became onExit %+v", wf.Spec.OnExit)
	}
	assertIgnored(t, ignored, "spec.templates[0].dag.tasks[0].name", "")
	assertIgnored(t, ignored, "spec.templates[0].dag.tasks[3].depends", "")
}

func TestArgoDAGTargetRunsWhatTheTargetsNeed(t *testing.T) {
	t.Parallel()
	wfs, _ := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      target: C E
      tasks:
      - {name: A, template: c}
      - {name: B, template: c, dependencies: [A]}
      - {name: C, template: c, depends: "B.Succeeded"}
      - {name: D, template: c, dependencies: [A]}
      - {name: E, template: c}
  - name: c
    container: {image: a, command: ["true"]}
`)
	var names []string
	for _, task := range wfs["wf"].Spec.Tasks {
		names = append(names, task.Name)
	}
	if want := []string{"a", "b", "c", "e"}; !cmp.Equal(want, names) {
		t.Errorf("tasks %v, want %v (D is not needed by the targets)", names, want)
	}
	errs := argoErr(t, "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\nspec:\n  entrypoint: main\n  templates:\n"+
		"  - name: main\n    dag:\n      target: '{{workflow.parameters.t}}'\n      tasks: [{name: a, template: c}]\n  - name: c\n    container: {image: a, command: [x]}\n")
	if len(errs) != 1 || errs[0].Code != apiv1.CodeUnsupported || errs[0].Field != "spec.templates[0].dag.target" {
		t.Errorf("a templated target: %v, want KLN-1026 on spec.templates[0].dag.target", errs)
	}
}

func TestArgoSuspendWaitingForASuppliedValueIsASignalGate(t *testing.T) {
	t.Parallel()
	wfs, ignored := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: ask, template: ask}
    - - name: go-on
        template: say
        when: "{{steps.ask.outputs.parameters.answer}} == yes"
        arguments: {parameters: [{name: m, value: "{{steps.ask.outputs.parameters.answer}}"}]}
  - name: ask
    suspend: {}
    inputs:
      parameters: [{name: answer, default: "no", description: "Go on?"}]
    outputs:
      parameters: [{name: answer, valueFrom: {supplied: {}}}]
  - name: say
    inputs: {parameters: [{name: m}]}
    container: {image: a, command: [echo, "{{inputs.parameters.m}}"]}
`)
	tasks := wfs["wf"].Spec.Tasks
	no := "no"
	want := &apiv1.Gate{Signal: &apiv1.SignalGate{Type: "string", Message: "Go on?", Default: &no}}
	if diff := cmp.Diff(want, tasks[0].Gate); diff != "" {
		t.Errorf("ask's gate (-want +got):\n%s", diff)
	}
	if tasks[1].When != `tasks["ask"].outputs.parameters["value"] == "yes"` || tasks[1].Command[1] != "{{tasks.ask.outputs.parameters.value}}" {
		t.Errorf("go-on reads the answer as %q and %q, want the signal's value", tasks[1].When, tasks[1].Command)
	}
	assertIgnored(t, ignored, "spec.templates[1].suspend", "")
}

func TestArgoInputsReachTheImage(t *testing.T) {
	t.Parallel()
	wfs, _ := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: run
        template: c
        arguments: {parameters: [{name: tag, value: "3.19"}]}
  - name: c
    inputs: {parameters: [{name: tag}]}
    container: {image: "alpine:{{inputs.parameters.tag}}", command: ["true"]}
`)
	if got := wfs["wf"].Spec.Tasks[0].Image; got != "alpine:3.19" {
		t.Errorf("image = %q, want the input substituted", got)
	}
}

func TestArgoWorkflowRetriesAreEveryTemplatesAndSuspensionsTimeOut(t *testing.T) {
	t.Parallel()
	wfs, _ := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  retryStrategy: {limit: 2}
  templates:
  - name: main
    steps:
    - - {name: own, template: own}
    - - {name: default, template: plain}
    - - {name: wait, template: wait}
  - name: own
    retryStrategy: {limit: 5}
    container: {image: a, command: ["true"]}
  - name: plain
    container: {image: a, command: ["true"]}
  - name: wait
    activeDeadlineSeconds: 30
    suspend: {}
`)
	tasks := wfs["wf"].Spec.Tasks
	if tasks[0].Retries.Limit != 5 || tasks[1].Retries.Limit != 2 {
		t.Errorf("retries %+v and %+v, want the template's 5 and the workflow's 2", tasks[0].Retries, tasks[1].Retries)
	}
	if g := tasks[2].Gate; g == nil || g.Approve == nil || g.Timeout != "30s" {
		t.Errorf("wait's gate = %+v, want an approval bounded by 30s", g)
	}
}

func TestArgoTemplateDefaultsAreMergedIntoEachTemplate(t *testing.T) {
	t.Parallel()
	wfs, _ := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templateDefaults:
    timeout: 30s
    container: {env: [{name: FROM, value: defaults}]}
  templates:
  - name: main
    steps:
    - - {name: a, template: c}
      - {name: b, template: inner}
  - name: inner
    steps:
    - - {name: x, template: c}
  - name: c
    timeout: 10s
    container: {image: a, command: ["true"]}
`)
	task := wfs["wf"].Spec.Tasks[0]
	if task.Timeout != "10s" || len(task.Env) != 1 || task.Env[0].Value != "defaults" {
		t.Errorf("task %+v, want its own timeout and the defaults' env", task)
	}
	if b := wfs["wf"].Spec.Tasks[1]; b.Workflow == nil || b.Command != nil {
		t.Errorf("b runs %+v, want the steps template inner (which took no container from the defaults)", b)
	}
}

func TestArgoGlobalOutputsAreTheRunsOutputs(t *testing.T) {
	t.Parallel()
	wfs, _ := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: make, template: make}
  - name: make
    container: {image: a, command: [sh, -c, "echo 1 > /tmp/wf-v; echo 2 > /tmp/wf-a"]}
    outputs:
      parameters: [{name: v, globalName: version, valueFrom: {path: /tmp/wf-v}}]
      artifacts: [{name: a, globalName: notes, path: /tmp/wf-a}]
`)
	want := &apiv1.WorkflowOutputs{
		Parameters: []apiv1.WorkflowOutput{{Name: "version", Value: "{{tasks.make.outputs.parameters.v}}"}},
		Artifacts:  []apiv1.WorkflowOutput{{Name: "notes", Value: "{{tasks.make.outputs.artifacts.a}}"}},
	}
	if diff := cmp.Diff(want, wfs["wf"].Spec.Outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
}

func TestArgoTemplateRefToNothingIsNamedAsWritten(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "argo", "templateref.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	errs := argoErr(t, string(b))
	if len(errs) != 2 || errs[0].Code != apiv1.CodeSubworkflow || errs[0].Field != "spec.templates[0].steps[0][0].templateRef.name" || errs[0].Line != 11 {
		t.Errorf("errors %v, want KLN-1025 on each templateRef.name (the first at line 11)", errs)
	}
}

func TestArgoEntrypointsOutputsAreTheRunsOutputs(t *testing.T) {
	t.Parallel()
	wfs, _ := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: make, template: make}
    outputs:
      parameters: [{name: side, valueFrom: {parameter: "{{steps.make.outputs.result}}"}}]
  - name: make
    script: {image: a, command: [sh], source: echo heads}
`)
	want := &apiv1.WorkflowOutputs{Parameters: []apiv1.WorkflowOutput{{Name: "side", Value: "{{tasks.make.outputs.parameters.result}}"}}}
	if diff := cmp.Diff(want, wfs["wf"].Spec.Outputs); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	// An output kiln cannot read is refused as a nested template's is.
	errs := argoErr(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks: [{name: make, template: make}]
    outputs:
      parameters: [{name: side, valueFrom: {expression: "tasks.make.outputs.result"}}]
  - name: make
    script: {image: a, command: [sh], source: echo heads}
`)
	if len(errs) != 1 || errs[0].Code != apiv1.CodeUnsupported || errs[0].Field != "spec.templates[0].outputs.parameters[0].valueFrom" {
		t.Errorf("errors %v, want KLN-1026 at the entrypoint's output's valueFrom", errs)
	}
	// A stored template's entrypoint is its root and a template of its
	// own: the problem is said once.
	errs = argoErr(t, `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: wt}
spec:
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks: [{name: make, template: make}]
    outputs:
      parameters: [{name: side, valueFrom: {expression: "tasks.make.outputs.result"}}]
  - name: make
    script: {image: a, command: [sh], source: echo heads}
`)
	if len(errs) != 1 || errs[0].Field != "spec.templates[0].outputs.parameters[0].valueFrom" {
		t.Errorf("errors %v, want one KLN-1026 at the entrypoint's output's valueFrom", errs)
	}
}

func TestArgoRefusalsNameTheWorkflowAsItsTranslationIsNamed(t *testing.T) {
	t.Parallel()
	errs := argoErr(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: pick-}
spec:
  entrypoint: main
  templates:
  - name: main
    container: {image: a, command: [echo], args: ["{{workflow.outputs.parameters.x}}"]}
`)
	if len(errs) != 1 || errs[0].Object != "Workflow/pick" || errs[0].Field != "spec.templates[0].container.args[0]" || errs[0].Line != 8 {
		t.Errorf("errors %v, want one naming Workflow/pick (its generateName), not the document's number, at line 8", errs)
	}
}

// TestArgoNotesAreNotCalledIgnored: what kiln honours its own way is a
// note saying how, never "is ignored"; what it ignores still says so.
func TestArgoNotesAreNotCalledIgnored(t *testing.T) {
	t.Parallel()
	_, ignored := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: notes-}
spec:
  entrypoint: main
  onExit: bye
  templates:
  - name: main
    steps:
    - - {name: A, template: out, continueOn: {failed: true}, onExit: bye}
    - - {name: wait, template: wait}
  - name: out
    memoize: {key: k, cache: {configMap: {name: c}}}
    container: {image: a, command: [sh, -c, "echo 1 > /tmp/notes-v"]}
    outputs: {parameters: [{name: v, valueFrom: {path: /tmp/notes-v}}]}
  - name: wait
    suspend: {}
  - name: bye
    container: {image: a, command: ["true"]}
`)
	notes := map[string]string{
		"metadata.generateName":                                  "",
		"spec.templates[0].steps[0][0].name":                     "",
		"spec.templates[0].steps[0][0].continueOn":               "",
		"spec.templates[0].steps[0][0].onExit":                   "",
		"spec.templates[2].suspend":                              "",
		"spec.templates[1].outputs.parameters[0].valueFrom.path": backendLocal,
	}
	for _, i := range ignored {
		backend, note := notes[i.Field]
		switch msg := i.Message(); {
		case note && (!i.Note || strings.Contains(msg, "ignored") || !strings.HasPrefix(msg, "note: "+i.Field)):
			t.Errorf("%s is honoured, its own way: want a note saying how, got %q", i.Field, msg)
		case note && backend != "" && !strings.Contains(msg, "on the "+backend+" backend"):
			t.Errorf("%s: the note %q does not name the %s backend", i.Field, msg, backend)
		case !note && (i.Note || !strings.Contains(msg, " is ignored ")):
			t.Errorf("%s is ignored: got %q", i.Field, msg)
		}
		delete(notes, i.Field)
	}
	if len(notes) > 0 {
		t.Errorf("no note for %v in %+v", notes, ignored)
	}
	assertIgnored(t, ignored, "spec.templates[1].memoize", "")
}

func TestArgoInputsReachThePodAndRunTimeValuesAreRefused(t *testing.T) {
	t.Parallel()
	wfs, _ := argoText(t, "wf.yaml", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: run
        template: c
        arguments: {parameters: [{name: arch, value: arm64}, {name: team, value: vision}]}
  - name: c
    inputs: {parameters: [{name: arch}, {name: team}]}
    nodeSelector: {kubernetes.io/arch: "{{inputs.parameters.arch}}"}
    tolerations: [{key: team, value: "{{inputs.parameters.team}}", effect: NoSchedule}]
    metadata: {labels: {team: "{{inputs.parameters.team}}"}}
    container: {image: a, command: ["true"]}
`)
	pt := wfs["wf"].Spec.Tasks[0].PodTemplate
	if pt == nil || pt.Spec == nil {
		t.Fatalf("no pod template: %+v", wfs["wf"].Spec.Tasks[0])
	}
	if got := pt.Spec.NodeSelector["kubernetes.io/arch"]; got != "arm64" {
		t.Errorf("nodeSelector = %v, want the input substituted", pt.Spec.NodeSelector)
	}
	if len(pt.Spec.Tolerations) != 1 || pt.Spec.Tolerations[0].Value != "vision" {
		t.Errorf("tolerations = %+v, want the input substituted", pt.Spec.Tolerations)
	}
	if got := pt.Metadata.Labels["team"]; got != "vision" {
		t.Errorf("labels = %v, want the input substituted", pt.Metadata.Labels)
	}
	// A workflow parameter is known as the run starts (kiln run -p), after
	// kiln set the pod's fields: refused, naming the field as written.
	errs := argoErr(t, `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  entrypoint: c
  arguments: {parameters: [{name: arch, value: amd64}]}
  nodeSelector: {pool: "{{workflow.parameters.arch}}"}
  templates:
  - name: c
    inputs: {parameters: [{name: arch}]}
    nodeSelector:
      kubernetes.io/arch: "{{inputs.parameters.arch}}"
    container: {image: a, command: ["true"]}
`)
	want := []string{"spec.nodeSelector[pool]", "spec.templates[0].nodeSelector[kubernetes.io/arch]"}
	var got []string
	for _, e := range errs {
		if e.Code != apiv1.CodeUnsupported {
			t.Errorf("error %v, want KLN-1026", e)
		}
		got = append(got, e.Field)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refused fields (-want +got):\n%s", diff)
	}
	if len(errs) == 2 && errs[1].Line != 12 {
		t.Errorf("the nodeSelector's key is at line 12, not %d", errs[1].Line)
	}
}
