package workflow

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// clusterRuntimeAndJob is upstream's examples/yaml/04-volcano-integration
// shape: a ClusterTrainingRuntime and the TrainJob that uses it, in one
// file.
const clusterRuntimeAndJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-volcano, labels: {trainer.kubeflow.org/framework: torch}}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  podGroupPolicy: {volcano: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: pytorch/pytorch}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: volcano-example}
spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-volcano}
  trainer: {numNodes: 2, command: [python3, -c, "print(1)"]}
`

// TestApplyStoresTheRuntimeAndRunsTheJobOfOneFile checks kiln apply's
// reading of a file with a runtime and the job that uses it: the runtime
// is stored, the job is a run that finds it among those applied, and the
// run's files hold the job alone.
func TestApplyStoresTheRuntimeAndRunsTheJobOfOneFile(t *testing.T) {
	t.Parallel()
	docs, err := Read("both.yaml", strings.NewReader(clusterRuntimeAndJob))
	if err != nil {
		t.Fatal(err)
	}
	got, err := CheckApply([]string{"both.yaml"}, docs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runtimes) != 1 || got.Runtimes[0].Kind != apiv1.KindClusterTrainingRuntime || len(got.Runs) != 1 {
		t.Fatalf("runtimes %v, runs %d; want the ClusterTrainingRuntime and one run", got.Runtimes, len(got.Runs))
	}
	r := got.Runs[0]
	if r.Doc.Object() != "TrainJob/volcano-example" || r.Plan.Tasks[0].Train.NumNodes != 2 {
		t.Errorf("run %s with %+v", r.Doc.Object(), r.Plan.Tasks[0].Train)
	}
	if len(r.Files) != 1 || r.Files[0].Name != "both.yaml" {
		t.Fatalf("files %+v, want both.yaml", r.Files)
	}
	data := string(r.Files[0].Data)
	if strings.Contains(data, "ClusterTrainingRuntime\nmetadata") || !strings.Contains(data, "kind: TrainJob") {
		t.Errorf("the run's file holds:\n%s\nwant the TrainJob alone: the runtime is stored", data)
	}
	// The run's files, submitted alone, find the runtime stored.
	stored := func(kind, name string) (*apiv1.TrainingRuntime, error) {
		if kind == apiv1.KindClusterTrainingRuntime && name == "torch-volcano" {
			return got.Runtimes[0], nil
		}
		return nil, nil
	}
	l, err := LoadSubmissionWith(&apiv1.Submission{Files: r.Files}, nil, stored)
	if err != nil || l.Doc.Object() != "TrainJob/volcano-example" {
		t.Fatalf("the run's files load as %v, %v", l, err)
	}
}

// TestApplyRunsAWorkflowWithTheTemplateAppliedBesideIt: a Workflow runs
// a WorkflowTemplate of the same files, and a Workflow of the files as a
// subworkflow, which goes with it rather than running apart.
func TestApplyRunsAWorkflowWithTheTemplateAppliedBesideIt(t *testing.T) {
	t.Parallel()
	docs := readDocs(t,
		templateDoc("prep", "  tasks: [{name: p, command: [echo, prep]}]\n"),
		workflowSpecDoc("main", "  tasks: [{name: a, workflow: {name: prep}}, {name: b, workflow: {name: sub}, dependsOn: [a]}]\n"),
		workflowSpecDoc("sub", "  tasks: [{name: s, command: [echo, sub]}]\n"))
	got, err := CheckApply([]string{"run.yaml"}, docs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Templates) != 1 || len(got.Runs) != 1 || got.Runs[0].Doc.Name != "main" {
		t.Fatalf("templates %d runs %+v; want prep stored and main run", len(got.Templates), got.Runs)
	}
	data := string(got.Runs[0].Files[0].Data)
	if strings.Contains(data, "WorkflowTemplate") || !strings.Contains(data, "name: sub") || !strings.Contains(data, "name: main") {
		t.Errorf("the run's file holds:\n%s\nwant main and sub, not the template", data)
	}
}

// TestApplyRefusesARunItCannotStart: kiln apply takes no parameters, so a
// run that needs one is refused before anything is stored.
func TestApplyRefusesARunItCannotStart(t *testing.T) {
	t.Parallel()
	docs := readDocs(t, runtimeDoc("TrainingRuntime", "ok", "{plain: {}}"),
		workflowSpecDoc("wf", "  params: [{name: lr}]\n  tasks: [{name: a, command: [echo, \"{{params.lr}}\"]}]\n"))
	got, err := CheckApply([]string{"run.yaml"}, docs, nil, nil)
	if got != nil || err == nil {
		t.Fatalf("CheckApply = %+v, %v; want nothing and the missing parameter", got, err)
	}
}

// TestProjectOfNamespaces checks how metadata.namespace picks the project.
func TestProjectOfNamespaces(t *testing.T) {
	t.Parallel()
	in := func(ns string) string {
		return "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wf, namespace: " + ns + "}\nspec:\n  tasks: [{name: a, command: [x]}]\n"
	}
	known := func(p string) (bool, error) { return p == "ml", nil }
	cases := map[string]struct {
		texts  []string
		given  string
		want   string
		refuse bool
	}{
		"none, none given":            {texts: []string{workflowSpecDoc("wf", "  tasks: [{name: a, command: [x]}]\n")}, want: "default"},
		"a known project":             {texts: []string{in("ml")}, want: "ml"},
		"the project given":           {texts: []string{in("ml")}, given: "ml", want: "ml"},
		"another than the given":      {texts: []string{in("ml")}, given: "cv", refuse: true},
		"an unknown project":          {texts: []string{in("nowhere")}, refuse: true},
		"default":                     {texts: []string{in("default")}, want: "default"},
		"two namespaces":              {texts: []string{in("ml"), strings.Replace(in("default"), "name: wf", "name: other", 1)}, refuse: true},
		"a cluster runtime's ignored": {texts: []string{strings.Replace(runtimeDoc("ClusterTrainingRuntime", "c", "{plain: {}}"), "name: c}", "name: c, namespace: kubeflow}", 1), in("ml")}, want: "ml"},
		"a translated document's":     {texts: []string{"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj, namespace: nowhere}\nspec: {runtimeRef: {name: torch-distributed}}\n"}, refuse: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			docs, _ := Translate(readDocs(t, tc.texts...))
			got, err := ProjectOf(docs, tc.given, known)
			var e *apiv1.Error
			switch {
			case tc.refuse && (!errors.As(err, &e) || e.Code != apiv1.CodeNamespace || e.Field != "metadata.namespace" || e.Line == 0 || e.Hint == ""):
				t.Errorf("ProjectOf = %q, %v; want KLN-1089 at metadata.namespace, placed, with a hint", got, err)
			case !tc.refuse && (err != nil || got != tc.want):
				t.Errorf("ProjectOf = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestApplyStoresAnArgoTemplateBesideItsWorkflow: kiln apply of an Argo
// WorkflowTemplate and a Workflow that calls it stores the template (as
// kubectl apply would) and runs the Workflow against what it stored;
// kiln run of the same files runs the template inline instead.
func TestApplyStoresAnArgoTemplateBesideItsWorkflow(t *testing.T) {
	t.Parallel()
	tmpl := "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: greet}\nspec:\n  templates:\n" +
		"  - {name: hello, container: {image: alpine, command: [echo, hi]}}\n"
	wf := "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: use}\nspec:\n  entrypoint: main\n  templates:\n" +
		"  - name: main\n    steps:\n    - - {name: one, templateRef: {name: greet, template: hello}}\n"
	got, err := CheckApply([]string{"run.yaml"}, readDocs(t, tmpl, wf), nil, nil)
	if err != nil {
		t.Fatalf("CheckApply: %v", err)
	}
	var names []string
	for _, tp := range got.Templates {
		names = append(names, tp.Metadata.Name)
	}
	if !slices.Contains(names, "greet-hello") || len(got.Runs) != 1 || got.Runs[0].Doc.Name != "use" {
		t.Errorf("CheckApply stores %v and runs %d documents; want greet-hello stored and use run", names, len(got.Runs))
	}
	docs, err := Translate(readDocs(t, tmpl, wf))
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	for _, d := range docs {
		if d.Kind == apiv1.KindWorkflowTemplate {
			t.Errorf("kiln run's translation keeps %s as a template to store; want it run inline", d.Name)
		}
	}
}
