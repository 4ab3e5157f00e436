package workflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// storedRuntimes is a StoredRuntimes over runtimes given as YAML
// documents: those of kind TrainingRuntime are project ml's, version 2;
// the others are ClusterTrainingRuntimes, version 5.
func storedRuntimes(t *testing.T, texts ...string) StoredRuntimes {
	t.Helper()
	var list []*apiv1.TrainingRuntime
	for _, d := range readDocs(t, texts...) {
		rt, err := DecodeRuntime(&d)
		if err != nil {
			t.Fatal(err)
		}
		rt.Status = &apiv1.RuntimeStatus{Version: 5}
		if rt.Kind == apiv1.KindTrainingRuntime {
			rt.Status = &apiv1.RuntimeStatus{Project: "ml", Version: 2}
		}
		list = append(list, rt)
	}
	return func(kind, name string) (*apiv1.TrainingRuntime, error) {
		for _, rt := range list {
			if rt.Kind == kind && rt.Metadata.Name == name {
				return rt, nil
			}
		}
		return nil, nil
	}
}

func runtimeDoc(kind, name, policy string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: " + kind + "\nmetadata: {name: " + name + "}\nspec:\n  mlPolicy: " + policy + "\n"
}

func trainJobDoc(ref string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\nspec:\n  runtimeRef: " + ref +
		"\n  trainer: {command: [/bin/sh, -c, 'true']}\n"
}

func TestATrainJobRunsAStoredRuntimeAndRecordsWhichVersion(t *testing.T) {
	t.Parallel()
	stored := storedRuntimes(t,
		runtimeDoc("TrainingRuntime", "mine", "{numNodes: 2, plain: {}}"),
		runtimeDoc("ClusterTrainingRuntime", "shared", "{numNodes: 3, plain: {}}"))
	cases := map[string]struct {
		texts     []string
		wantNodes int
		want      apiv1.ResolvedRuntimeRef
	}{
		"the project's": {
			texts: []string{trainJobDoc("{name: mine}")}, wantNodes: 2,
			want: apiv1.ResolvedRuntimeRef{Kind: "TrainingRuntime", Name: "mine", Project: "ml", Version: 2, Source: apiv1.RuntimeSourceStored},
		},
		"a cluster one, by kind and Trainer's group": {
			texts: []string{trainJobDoc("{name: shared, kind: ClusterTrainingRuntime, apiGroup: trainer.kubeflow.org}")}, wantNodes: 3,
			want: apiv1.ResolvedRuntimeRef{Kind: "ClusterTrainingRuntime", Name: "shared", Version: 5, Source: apiv1.RuntimeSourceStored},
		},
		"the files' over the stored one": {
			texts:     []string{trainJobDoc("{name: mine}"), runtimeDoc("TrainingRuntime", "mine", "{numNodes: 4, plain: {}}")},
			wantNodes: 4,
			want:      apiv1.ResolvedRuntimeRef{Kind: "TrainingRuntime", Name: "mine", Source: apiv1.RuntimeSourceFiles},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			plans, err := CheckDocumentsWith(readDocs(t, tc.texts...), nil, stored)
			if err != nil || len(plans) != 1 {
				t.Fatalf("CheckDocumentsWith = %d plans, %v", len(plans), err)
			}
			train := plans[0].Plan.Workflow.Spec.Tasks[0].Train
			if diff := cmp.Diff(&tc.want, train.ResolvedRuntimeRef); diff != "" {
				t.Errorf("the run's record of its runtime (-want +got):\n%s", diff)
			}
			if got := plans[0].Plan.Tasks[0].Train.NumNodes; got != tc.wantNodes || train.ResolvedRuntime == nil {
				t.Errorf("the job runs %d nodes, want %d, with its resolved spec kept (%v)", got, tc.wantNodes, train.ResolvedRuntime)
			}
		})
	}
}

func TestARuntimeRefThatFindsNothingIsRefusedAtItsField(t *testing.T) {
	t.Parallel()
	stored := storedRuntimes(t, runtimeDoc("ClusterTrainingRuntime", "shared", "{plain: {}}"))
	cases := map[string]struct {
		texts []string
		want  []problem
		says  string
		// wantPlans counts the runnable documents still valid.
		wantPlans int
	}{
		"no runtime of the name": {
			texts: []string{trainJobDoc("{name: nope}")},
			want:  []problem{{apiv1.CodeUnknownRuntime, "spec.runtimeRef.name"}},
			says:  `no runtime is named "nope": none in the files, stored in the project or for all projects, or built in`,
		},
		"a cluster runtime asked for as the project's": {
			texts: []string{trainJobDoc("{name: shared, kind: TrainingRuntime}")},
			want:  []problem{{apiv1.CodeRuntimeKind, "spec.runtimeRef.kind"}},
			says:  `runtime "shared" is a ClusterTrainingRuntime, not a TrainingRuntime`,
		},
		"a kind kiln does not know": {
			texts: []string{trainJobDoc("{name: shared, kind: Runtime}")},
			want:  []problem{{apiv1.CodeRuntimeRef, "spec.runtimeRef.kind"}},
		},
		"an apiGroup kiln does not know": {
			texts: []string{trainJobDoc("{name: shared, apiGroup: kubeflow.org}")},
			want:  []problem{{apiv1.CodeRuntimeRef, "spec.runtimeRef.apiGroup"}},
			says:  `apiGroup "kubeflow.org" is neither kiln.dev nor trainer.kubeflow.org`,
		},
		"a workflow task's runtimeKind": {
			texts: []string{workflowSpecDoc("wf", "  tasks: [{name: t, train: {runtime: shared, runtimeKind: TrainingRuntime, command: [x]}}]\n")},
			want:  []problem{{apiv1.CodeRuntimeKind, "spec.tasks[0].train.runtimeKind"}},
		},
		"a ClusterTrainingRuntime in a run's files": {
			texts:     []string{trainJobDoc("{name: shared}"), runtimeDoc("ClusterTrainingRuntime", "other", "{plain: {}}")},
			want:      []problem{{apiv1.CodeKind, "kind"}},
			says:      "kiln apply -f run.yaml stores ClusterTrainingRuntime/other first and then runs TrainJob/job",
			wantPlans: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			plans, err := CheckDocumentsWith(readDocs(t, tc.texts...), nil, stored)
			var got []problem
			for _, e := range apiv1.Errors(err) {
				got = append(got, problem{e.Code, e.Field})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if len(plans) != tc.wantPlans || !strings.Contains(errString(err), tc.says) {
				t.Errorf("CheckDocumentsWith = %d plans, %v; want %d and an error saying %q", len(plans), err, tc.wantPlans, tc.says)
			}
		})
	}
}

func TestAStoreErrorLookingUpARuntimeIsReturnedAlone(t *testing.T) {
	t.Parallel()
	broken := errors.New("disk on fire")
	plans, err := CheckDocumentsWith(readDocs(t, trainJobDoc("{name: nope}")), nil,
		func(string, string) (*apiv1.TrainingRuntime, error) { return nil, broken })
	if plans != nil || !errors.Is(err, broken) || len(apiv1.Errors(err)) != 0 {
		t.Errorf("CheckDocumentsWith with the store broken = %v, %v; want the store's error alone", plans, err)
	}
}

func TestCheckApplyTakesRuntimesAndTemplatesAllOrNothing(t *testing.T) {
	t.Parallel()
	usesMine := templateDoc("tmpl", "  tasks: [{name: t, train: {runtime: applied, command: [x]}}]\n")
	got, err := CheckApply([]string{"run.yaml"}, readDocs(t,
		runtimeDoc("TrainingRuntime", "applied", "{plain: {}}"),
		runtimeDoc("ClusterTrainingRuntime", "applied", "{torch: {}}")+"status: {version: 9, source: stored}\n",
		usesMine), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rt := range got.Runtimes {
		names = append(names, rt.Kind+"/"+rt.Metadata.Name)
		if rt.Status != nil {
			t.Errorf("%s/%s keeps the status of its document: %+v; kiln sets it", rt.Kind, rt.Metadata.Name, rt.Status)
		}
	}
	if want := []string{"TrainingRuntime/applied", "ClusterTrainingRuntime/applied"}; !cmp.Equal(want, names) || len(got.Templates) != 1 {
		t.Errorf("CheckApply = runtimes %v and %d templates; want %v and the template that uses one", names, len(got.Templates), want)
	}

	cases := map[string]struct {
		texts []string
		want  []problem
	}{
		"no mlPolicy": {
			texts: []string{"apiVersion: kiln.dev/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: bare}\nspec: {}\n", usesMine},
			want:  []problem{{apiv1.CodeNoMLPolicy, "spec.mlPolicy"}, {apiv1.CodeUnknownRuntime, "spec.tasks[0].train.runtime"}},
		},
		"two frameworks": {
			texts: []string{runtimeDoc("ClusterTrainingRuntime", "both", "{torch: {}, mpi: {}}")},
			want:  []problem{{apiv1.CodeNoMLPolicy, "spec.mlPolicy"}},
		},
		"a number out of range": {
			texts: []string{runtimeDoc("TrainingRuntime", "many", "{numNodes: 0, plain: {}}")},
			want:  []problem{{apiv1.CodeOutOfRange, "spec.mlPolicy.numNodes"}},
		},
		"one runtime twice": {
			texts: []string{runtimeDoc("TrainingRuntime", "same", "{plain: {}}"), runtimeDoc("TrainingRuntime", "same", "{jax: {}}")},
			want:  []problem{{apiv1.CodeDuplicate, "metadata.name"}},
		},
		"a broken workflow beside a valid runtime": {
			texts: []string{runtimeDoc("TrainingRuntime", "ok", "{plain: {}}"), workflowSpecDoc("wf", "  tasks: [{name: a, command: [x], dependsOn: [b]}]\n")},
			want:  []problem{{apiv1.CodeUnknownDep, "spec.tasks[0].dependsOn[0]"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := CheckApply([]string{"run.yaml"}, readDocs(t, tc.texts...), nil, nil)
			var problems []problem
			for _, e := range apiv1.Errors(err) {
				problems = append(problems, problem{e.Code, e.Field})
				if e.File != "run.yaml" || e.Object == "" {
					t.Errorf("%v names file %q and object %q; want both", e, e.File, e.Object)
				}
			}
			if diff := cmp.Diff(tc.want, problems); diff != "" || got != nil {
				t.Errorf("CheckApply = %+v; problems (-want +got):\n%s", got, diff)
			}
		})
	}
}
