package workflow

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestATrainJobsInitializersRunBeforeItsTrainer(t *testing.T) {
	t.Parallel()
	plans, got := checkText(t, "tj.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: plain}
  initializer:
    dataset: {storageUri: ./data, env: [{name: SPLIT, value: train}]}
    model: {storageUri: "https://example.com/m.bin", secretRef: {name: hub}}
  trainer: {command: ["true"], image: trainer:1}
  runPolicy: {backoffLimit: 1, cleanPodPolicy: All, restartPolicy: ExitCode}
`)
	if len(got) != 0 || len(plans) != 1 {
		t.Fatalf("problems %v, want one plan", got)
	}
	p := plans[0].Plan
	var kinds []apiv1.NodeKind
	for _, task := range p.Tasks {
		kinds = append(kinds, task.Kind)
	}
	if want := []apiv1.NodeKind{apiv1.NodeKindTrain, apiv1.NodeKindInitializer, apiv1.NodeKindInitializer}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	trainer := p.Tasks[0]
	if !slices.Equal(trainer.Spec.DependsOn, []string{"dataset-initializer", "model-initializer"}) ||
		!slices.Equal(trainer.Train.Initializers, []string{"dataset", "model"}) {
		t.Errorf("trainer depends on %v and reads %v", trainer.Spec.DependsOn, trainer.Train.Initializers)
	}
	if !slices.Equal(p.Graph.Upstream(0), []int{1, 2}) {
		t.Errorf("the trainer's upstream nodes are %v, want both initializers", p.Graph.Upstream(0))
	}
	if rp := trainer.Train.RunPolicy; rp == nil || rp.CleanPodPolicy != apiv1.CleanPodPolicyAll || rp.RestartPolicy != apiv1.RestartPolicyExitCode || trainer.Retry.Limit != 1 {
		t.Errorf("trainer policy %+v, retries %d", rp, trainer.Retry.Limit)
	}
	for _, init := range p.Tasks[1:] {
		if init.Cache == nil || init.Image != "trainer:1" || init.Spec.Outputs == nil || len(init.Spec.Outputs.Artifacts) != 1 {
			t.Errorf("initializer %s: cache %v, image %q, outputs %+v; want cached, the trainer's image and one artifact",
				init.Spec.Name, init.Cache, init.Image, init.Spec.Outputs)
		}
	}
}

func TestInitializerAndRunPolicyErrorsNameTheTrainJobsFields(t *testing.T) {
	t.Parallel()
	_, got := checkText(t, "tj.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: mpi}
  initializer:
    dataset: {storageUri: "hf://tatsu-lab/alpaca"}
    model: {storageUri: "s3://bucket/model", env: [{name: KILN_X, value: "1"}]}
  trainer: {command: ["true"]}
  runPolicy: {cleanPodPolicy: Sometimes, groups: {node: {restartPolicy: Never}}}
`)
	want := []problem{
		{apiv1.CodeRunPolicyValue, "spec.runPolicy.cleanPodPolicy"},
		{apiv1.CodeReplicaGroup, "spec.runPolicy.groups.node"},
		{apiv1.CodeStorageScheme, "spec.initializer.dataset.storageUri"},
		{apiv1.CodeArtifactStore, "spec.initializer.model.storageUri"},
		{apiv1.CodeReservedEnv, "spec.initializer.model.env[0].name"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	_, got = checkText(t, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: wf}
spec:
  tasks:
  - {name: fit, train: {runtime: plain, command: ["true"], initializers: [dataset]}}
  - {name: dataset-initializer, initialize: {name: data, storageUri: x}}
`)
	want = []problem{
		{apiv1.CodeUnknownDep, "spec.tasks[0].train.initializers[0]"},
		{apiv1.CodeInvalidValue, "spec.tasks[1].initialize.name"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workflow problems (-want +got):\n%s", diff)
	}
}
