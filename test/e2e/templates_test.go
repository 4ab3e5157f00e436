package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// scoreTemplate multiplies its param num by factor and gives the product
// as its output score.
func scoreTemplate(factor string) string {
	return `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: score}
spec:
  params: [{name: num}]
  tasks:
  - name: calc
    command: [sh, -c, 'echo $(({{params.num}} * ` + factor + `)) > $KILN_OUTPUTS/s']
    outputs: {parameters: [{name: s}]}
  outputs:
    parameters: [{name: score, value: "{{tasks.calc.outputs.parameters.s}}"}]
`
}

func TestAStoredTemplateRunsByNameUntilItIsDeleted(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	out := filepath.Join(dir, "out")
	tmpl := writeFile(t, dir, "score.yaml", scoreTemplate("6"))
	main := writeFile(t, dir, "main.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: main}
spec:
  tasks:
  - name: prep
    command: [sh, -c, 'echo 7 > $KILN_OUTPUTS/num']
    outputs: {parameters: [{name: num}]}
  - name: eval
    dependsOn: [prep]
    workflow:
      name: score
      params: [{name: num, value: "{{tasks.prep.outputs.parameters.num}}"}]
  - name: show
    dependsOn: [eval]
    command: [sh, -c, 'echo score-{{tasks.eval.outputs.parameters.score}} >> `+out+`']
  outputs:
    parameters: [{name: score, value: "{{tasks.eval.outputs.parameters.score}}"}]
`)

	if r := kiln(t, home, "apply", "-f", tmpl); r.code != 0 || r.stdout != "WorkflowTemplate/score created in project default\n" {
		t.Fatalf("apply = exit %d %q %q; want it created", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "get", "templates"); r.code != 0 || !strings.Contains(r.stdout, "score") || !strings.Contains(r.stdout, "num") {
		t.Errorf("get templates = exit %d %q; want score with its param num", r.code, r.stdout)
	}
	if r := kiln(t, home, "run", main); r.code != 0 {
		t.Fatalf("run exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	first := describe(t, home, runs(t, home)[0].ID)
	if ev := nodeNamed(t, first, "eval"); ev.Kind != apiv1.NodeKindSubworkflow || ev.Phase != apiv1.PhaseSucceeded || ev.Children.Succeeded != 1 {
		t.Errorf("eval = %s %s %+v; want a succeeded subworkflow node with one child", ev.Kind, ev.Phase, ev.Children)
	}
	if calc := nodeNamed(t, first, "eval.calc"); calc.Parent != "eval" || calc.Phase != apiv1.PhaseSucceeded {
		t.Errorf("eval.calc = parent %q %s; want the template's task run under eval", calc.Parent, calc.Phase)
	}
	if first.Status.Outputs == nil || first.Status.Outputs.Parameters["score"] != "42" {
		t.Errorf("run outputs = %+v, want score=42 from the template", first.Status.Outputs)
	}

	if r := kiln(t, home, "apply", "-f", writeFile(t, dir, "score.yaml", scoreTemplate("10"))); r.code != 0 || !strings.Contains(r.stdout, "WorkflowTemplate/score replaced") {
		t.Fatalf("apply of a changed template = exit %d %q %q; want it replaced", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "run", main); r.code != 0 {
		t.Fatalf("second run exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	list := runs(t, home)
	second := describe(t, home, list[0].ID)
	if second.ID == first.ID || second.Status.Outputs == nil || second.Status.Outputs.Parameters["score"] != "70" {
		t.Errorf("second run %s outputs = %+v, want score=70 from the changed template", second.ID, second.Status.Outputs)
	}
	if b, _ := os.ReadFile(out); string(b) != "score-42\nscore-70\n" {
		t.Errorf("out = %q, want score-42 then score-70", b)
	}
	if kept := describe(t, home, first.ID); len(kept.Subworkflows) != 1 || !strings.Contains(strings.Join(kept.Subworkflows[0].Spec.Tasks[0].Command, " "), "* 6") {
		t.Errorf("the first run's subworkflows = %+v; want the copy it ran, with factor 6", kept.Subworkflows)
	}

	if r := kiln(t, home, "delete", "template", "score"); r.code != 0 || r.stdout != "WorkflowTemplate/score deleted from project default\n" {
		t.Fatalf("delete = exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r := kiln(t, home, "run", main)
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-1025") || !strings.Contains(r.stderr, `"score" is neither a Workflow in the files`) {
		t.Errorf("run after the delete = exit %d %q; want KLN-1025 saying score is neither in the files nor stored", r.code, r.stderr)
	}
	if n := len(runs(t, home)); n != 2 {
		t.Errorf("%d runs after the refusal, want 2: nothing is created", n)
	}
	if r := kiln(t, home, "delete", "template", "score"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4015") {
		t.Errorf("deleting it twice = exit %d %q; want KLN-4015", r.code, r.stderr)
	}
}

func TestApplyRefusesWhatGoesWithARunAndStoresNothing(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	mixed := writeFile(t, dir, "mixed.yaml", scoreTemplate("6")+`---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: my-job}
spec: {runtimeRef: {name: torch-distributed}}
`)
	r := kiln(t, home, "apply", "-f", mixed, "--project", "ml")
	// kiln apply runs a TrainJob beside the templates it stores: one that
	// cannot run (it has no command) keeps them from being stored.
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-1004 "+mixed+":16:1: TrainJob/my-job: spec.trainer.command") {
		t.Errorf("apply with a TrainJob that cannot run = exit %d %q; want KLN-1004 naming its file, object and field", r.code, r.stderr)
	}
	r = kiln(t, home, "get", "templates", "--project", "ml", "-o", "json")
	var got []apiv1.WorkflowTemplate
	if err := unmarshalList(r.stdout, "WorkflowTemplateList", &got); r.code != 0 || err != nil || len(got) != 0 {
		t.Errorf("templates of ml after the refusal = exit %d %q; want none", r.code, r.stdout)
	}
	if r := kiln(t, home, "apply", "-f", writeFile(t, dir, "ok.yaml", scoreTemplate("6")), "--project", "ml"); r.code != 0 {
		t.Fatalf("apply = exit %d %q", r.code, r.stderr)
	}
	r = kiln(t, home, "get", "templates", "score", "--project", "ml", "-o", "yaml")
	if r.code != 0 || !strings.Contains(r.stdout, "kind: WorkflowTemplate") || !strings.Contains(r.stdout, "project: ml") {
		t.Fatalf("get templates score -o yaml = exit %d %q", r.code, r.stdout)
	}
	again := writeFile(t, dir, "again.yaml", r.stdout)
	if r := kiln(t, home, "apply", "-f", again, "--project", "ml"); r.code != 0 || !strings.Contains(r.stdout, "replaced") {
		t.Errorf("applying what get printed = exit %d %q %q; want it taken back", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "get", "templates"); r.code != 0 || strings.Contains(r.stdout, "score") {
		t.Errorf("templates of the default project = %q; ml's are its own", r.stdout)
	}
}

// Through a server, kiln apply, get and delete take the same files and
// print the same, and a run of the project finds the stored template.
func TestTemplatesThroughAServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	dir, other := t.TempDir(), t.TempDir()
	tmpl := writeFile(t, dir, "score.yaml", scoreTemplate("6"))
	main := writeFile(t, dir, "main.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: main}
spec:
  tasks: [{name: eval, workflow: {name: score, params: [{name: num, value: "7"}]}}]
  outputs:
    parameters: [{name: score, value: "{{tasks.eval.outputs.parameters.score}}"}]
`)
	if r := kilnWithEnv(t, client, other, "apply", "-f", tmpl, "--project", "ml"); r.code != 0 || r.stdout != "WorkflowTemplate/score created in project ml\n" {
		t.Fatalf("remote apply = exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	bad := writeFile(t, dir, "bad.yaml", strings.Replace(scoreTemplate("6"), "{{params.num}}", "{{params.nope}}", 1))
	if r := kilnWithEnv(t, client, other, "apply", "-f", bad, "--project", "ml"); r.code != 1 || !strings.Contains(r.stderr, "KLN-1011 "+bad+":8:23: WorkflowTemplate/score: spec.tasks[0].command[2]") {
		t.Errorf("remote apply of a bad template = exit %d %q; want KLN-1011 naming its file, object and field", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, client, other, "get", "templates", "--project", "ml"); r.code != 0 || !strings.Contains(r.stdout, "score  1      num") {
		t.Errorf("remote get templates = exit %d %q", r.code, r.stdout)
	}
	r := kilnWithEnv(t, client, other, "run", "--project", "ml", main)
	if r.code != 0 {
		t.Fatalf("remote run of the template = exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, client, other, "run", main); r.code != 1 || !strings.Contains(r.stderr, "KLN-1025") {
		t.Errorf("a run of the default project, which stores no score = exit %d %q; want KLN-1025", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, client, other, "delete", "template", "score", "--project", "ml"); r.code != 0 {
		t.Errorf("remote delete = exit %d %q", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, client, other, "get", "templates", "score", "--project", "ml"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4015") {
		t.Errorf("remote get of a deleted template = exit %d %q; want KLN-4015", r.code, r.stderr)
	}
}
