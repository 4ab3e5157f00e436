package workflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// storedIn is a Stored over templates, given as YAML documents, that
// records the names it is asked for.
func storedIn(t *testing.T, asked *[]string, texts ...string) Stored {
	t.Helper()
	byName := map[string]*apiv1.Workflow{}
	for _, text := range texts {
		docs, err := Read("stored.yaml", strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := DecodeWorkflowTemplate(&docs[0])
		if err != nil {
			t.Fatal(err)
		}
		byName[tmpl.Metadata.Name] = tmpl.Workflow()
	}
	return func(name string) (*apiv1.Workflow, error) {
		*asked = append(*asked, name)
		return byName[name], nil
	}
}

func templateDoc(name, spec string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: " + name + "}\nspec:\n" + spec
}

func workflowSpecDoc(name, spec string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: " + name + "}\nspec:\n" + spec
}

const runsEval = `  tasks:
  - name: go
    workflow: {name: eval, params: [{name: num, value: "3"}]}
`

func readDocs(t *testing.T, texts ...string) []Document {
	t.Helper()
	docs, err := Read("run.yaml", strings.NewReader(strings.Join(texts, "---\n")))
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// taskNames are the names of the tasks the subworkflow task go of plan runs.
func subTaskNames(plan *Plan) []string {
	var names []string
	for _, t := range plan.Tasks[plan.Index["go"]].Sub.Plan.Tasks {
		names = append(names, t.Spec.Name)
	}
	return names
}

func TestStoredTemplatesRunWhereTheFilesHaveNoWorkflow(t *testing.T) {
	t.Parallel()
	var asked []string
	stored := storedIn(t, &asked,
		templateDoc("eval", "  params: [{name: num}]\n  tasks:\n  - {name: score, command: [echo, '{{params.num}}']}\n  - {name: deeper, dependsOn: [score], workflow: {name: leaf}}\n"),
		templateDoc("leaf", "  tasks: [{name: last, command: [\"true\"]}]\n"),
	)
	plans, err := CheckDocuments(readDocs(t, workflowSpecDoc("main", runsEval)), stored)
	if err != nil || len(plans) != 1 {
		t.Fatalf("CheckDocuments = %d plans, %v; want main compiled with the stored eval", len(plans), err)
	}
	if diff := cmp.Diff([]string{"score", "deeper"}, subTaskNames(plans[0].Plan)); diff != "" {
		t.Errorf("tasks go runs (-want +got):\n%s", diff)
	}
	uses := plans[0].Plan.Uses()
	if uses["eval"] == nil || uses["leaf"] == nil || uses["eval"].Kind != apiv1.KindWorkflowTemplate || len(uses) != 2 {
		t.Errorf("Uses = %v; want the stored eval and the leaf it runs, kept as WorkflowTemplates", uses)
	}
	if diff := cmp.Diff([]string{"eval", "leaf"}, asked); diff != "" {
		t.Errorf("names looked up (-want +got):\n%s", diff)
	}
}

func TestTheFilesWorkflowWinsOverAStoredTemplate(t *testing.T) {
	t.Parallel()
	var asked []string
	stored := storedIn(t, &asked, templateDoc("eval", "  params: [{name: num}]\n  tasks: [{name: stored-task, command: [echo]}]\n"))
	docs := readDocs(t, workflowSpecDoc("main", runsEval), workflowSpecDoc("eval", "  params: [{name: num}]\n  tasks: [{name: file-task, command: [echo]}]\n"))
	plans, err := CheckDocuments(docs, stored)
	if err != nil || len(plans) != 1 {
		t.Fatalf("CheckDocuments = %d plans, %v; want main alone runnable", len(plans), err)
	}
	if diff := cmp.Diff([]string{"file-task"}, subTaskNames(plans[0].Plan)); diff != "" {
		t.Errorf("tasks go runs (-want +got):\n%s", diff)
	}
	if len(asked) != 0 {
		t.Errorf("looked up %v in the store; the files held eval", asked)
	}
}

func TestAMissingSubworkflowIsNeitherInTheFilesNorStored(t *testing.T) {
	t.Parallel()
	var asked []string
	readsIt := runsEval + "  - {name: after, dependsOn: [go], command: [echo, '{{tasks.go.outputs.parameters.score}}']}\n"
	_, err := CheckDocuments(readDocs(t, workflowSpecDoc("main", readsIt)), storedIn(t, &asked))
	errs := apiv1.Errors(err)
	if len(errs) != 1 || errs[0].Code != apiv1.CodeSubworkflow || errs[0].Field != "spec.tasks[0].workflow.name" ||
		errs[0].Message != `"eval" is neither a Workflow in the files (it holds main) nor a WorkflowTemplate stored in the project` {
		t.Errorf("errors = %v; want one KLN-1025 at spec.tasks[0].workflow.name saying eval is neither in the files nor stored", err)
	}
	_, err = CheckDocuments(readDocs(t, workflowSpecDoc("main", runsEval)), nil)
	if apiv1.CodeOf(err) != apiv1.CodeSubworkflow || strings.Contains(err.Error(), "stored") {
		t.Errorf("without a store: %v; want KLN-1025 about the files alone", err)
	}
}

func TestACycleThroughAStoredTemplateIsRefused(t *testing.T) {
	t.Parallel()
	var asked []string
	stored := storedIn(t, &asked, templateDoc("eval", "  params: [{name: num}]\n  tasks: [{name: back, workflow: {name: main}}]\n"))
	_, err := CheckDocuments(readDocs(t, workflowSpecDoc("main", runsEval)), stored)
	if apiv1.CodeOf(err) != apiv1.CodeSubworkflow || !strings.Contains(err.Error(), "main -> eval -> main") ||
		!strings.Contains(err.Error(), "WorkflowTemplate/eval: spec.tasks[0].workflow.name") {
		t.Errorf("err = %v; want KLN-1025 printing main -> eval -> main, found in WorkflowTemplate/eval", err)
	}
}

func TestAStoreFailureIsReturnedAlone(t *testing.T) {
	t.Parallel()
	broken := errors.New("disk on fire")
	stored := func(string) (*apiv1.Workflow, error) { return nil, broken }
	docs := readDocs(t, workflowSpecDoc("main", runsEval+"  - {name: BAD, command: [x]}\n"))
	plans, err := CheckDocuments(docs, stored)
	if !errors.Is(err, broken) || len(apiv1.Errors(err)) != 0 || plans != nil {
		t.Errorf("CheckDocuments = %d plans, %v; want the store's error alone, not a spec problem", len(plans), err)
	}
}

func TestCheckTemplates(t *testing.T) {
	t.Parallel()
	var asked []string
	stored := storedIn(t, &asked, templateDoc("leaf", "  tasks: [{name: last, command: [\"true\"]}]\n"))
	docs := readDocs(t,
		templateDoc("eval", "  params: [{name: num}]\n  tasks: [{name: s, command: [echo, '{{params.num}}']}, {name: l, workflow: {name: leaf}}]\n"),
		templateDoc("top", runsEval),
	)
	tmpls, err := CheckTemplates([]string{"run.yaml"}, docs, stored)
	var names []string
	for _, tm := range tmpls {
		names = append(names, tm.Kind+"/"+tm.Metadata.Name)
	}
	if err != nil || !cmp.Equal(names, []string{"WorkflowTemplate/eval", "WorkflowTemplate/top"}) {
		t.Errorf("CheckTemplates = %v, %v; want eval and top, top running eval of the files and eval the stored leaf", names, err)
	}

	cases := map[string]struct {
		texts []string
		want  []problem
		says  string
	}{
		"a training runtime is not a template": {
			texts: []string{"apiVersion: kiln.dev/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: rt}\nspec: {}\n"},
			want:  []problem{{apiv1.CodeKind, "kind"}},
			says:  "TrainingRuntime/rt: kind: a TrainingRuntime is not a WorkflowTemplate: this request stores templates alone",
		},
		"a workflow runs with kiln run": {
			texts: []string{workflowSpecDoc("wf", "  tasks: [{name: a, command: [x]}]\n")},
			want:  []problem{{apiv1.CodeKind, "kind"}},
			says:  "kiln apply stores WorkflowTemplates",
		},
		"a template is checked as a workflow": {
			texts: []string{templateDoc("bad", "  tasks: [{name: a, command: [x], dependsOn: [nope]}]\n")},
			want:  []problem{{apiv1.CodeUnknownDep, "spec.tasks[0].dependsOn[0]"}},
			says:  "WorkflowTemplate/bad",
		},
		"a template's unknown field is refused": {
			texts: []string{templateDoc("odd", "  tasks: [{name: a, command: [x]}]\n  extra: 1\n")},
			want:  []problem{{apiv1.CodeUnknownField, "spec.extra"}},
		},
		"two templates of one name": {
			texts: []string{templateDoc("same", "  tasks: [{name: a, command: [x]}]\n"), templateDoc("same", "  tasks: [{name: b, command: [x]}]\n")},
			want:  []problem{{apiv1.CodeDuplicate, "metadata.name"}},
		},
		"templates that run each other": {
			texts: []string{templateDoc("ping", "  tasks: [{name: a, workflow: {name: pong}}]\n"), templateDoc("pong", "  tasks: [{name: b, workflow: {name: ping}}]\n")},
			want:  []problem{{apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}, {apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}},
			says:  "ping -> pong -> ping",
		},
		"a template that runs one neither applied nor stored": {
			texts: []string{templateDoc("lonely", "  tasks: [{name: a, workflow: {name: gone}}]\n")},
			want:  []problem{{apiv1.CodeSubworkflow, "spec.tasks[0].workflow.name"}},
			says:  `"gone" is neither a Workflow in the files (it holds lonely) nor a WorkflowTemplate stored in the project`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			tmpls, err := CheckTemplates([]string{"run.yaml"}, readDocs(t, tc.texts...), storedIn(t, &asked))
			var got []problem
			for _, e := range apiv1.Errors(err) {
				got = append(got, problem{e.Code, e.Field})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tmpls != nil || !strings.Contains(errString(err), tc.says) {
				t.Errorf("CheckTemplates = %v, %v; want no templates and an error saying %q", tmpls, err, tc.says)
			}
		})
	}
}

func TestNoFilesHoldNoTemplate(t *testing.T) {
	t.Parallel()
	tmpls, err := CheckTemplates(nil, nil, nil)
	if tmpls != nil || apiv1.CodeOf(err) != apiv1.CodeRequired || !strings.Contains(err.Error(), "no WorkflowTemplate") {
		t.Errorf("CheckTemplates of nothing = %v, %v; want KLN-1004: there is nothing to store", tmpls, err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestAppliedStatusIsIgnored(t *testing.T) {
	t.Parallel()
	text := templateDoc("t", "  tasks: [{name: a, command: [x]}]\n") +
		"status: {project: elsewhere, createdAt: \"2026-01-02T03:04:05Z\", updatedAt: \"2026-01-02T03:04:05Z\"}\n"
	var asked []string
	tmpls, err := CheckTemplates([]string{"run.yaml"}, readDocs(t, text), storedIn(t, &asked))
	if err != nil || len(tmpls) != 1 || tmpls[0].Status != nil {
		t.Errorf("CheckTemplates = %+v, %v; want the template, its status (kiln get's) dropped", tmpls, err)
	}
}

func TestARunsFilesRefuseATemplateDocument(t *testing.T) {
	t.Parallel()
	_, err := CheckDocuments(readDocs(t, templateDoc("t", "  tasks: [{name: a, command: [x]}]\n")), nil)
	if apiv1.CodeOf(err) != apiv1.CodeKind || !strings.Contains(err.Error(), "kiln apply") {
		t.Errorf("err = %v; want KLN-1003 pointing to kiln apply", err)
	}
}
