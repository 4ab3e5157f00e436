package workflow

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	trainerv1 "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Every JSON field of Trainer v2.3.0's TrainJob, TrainingRuntime and
// ClusterTrainingRuntime (pkg/apis/trainer/v1alpha1, and the JobSet
// v0.12 spec a runtime's template embeds), written here by hand from the
// upstream types, each set. Kubernetes' own types inside them (pod specs,
// env, resources, volumes) are read with Kubernetes' Go types.
const (
	// allMeta is metav1.ObjectMeta as kubectl get -o yaml prints it.
	allMeta = `  generateName: everything-
  labels: {team: vision}
  annotations: {note: all}
  uid: 0d6a7a4b-1111-2222-3333-444455556666
  resourceVersion: "4242"
  generation: 3
  creationTimestamp: "2026-01-02T03:04:05Z"
  deletionTimestamp: "2026-01-02T03:04:06Z"
  deletionGracePeriodSeconds: 30
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: u}]
  finalizers: [trainer.kubeflow.org/resources]
  managedFields: [{manager: kubectl, operation: Apply}]
  selfLink: /apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/everything
`
	allTrainJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: everything
  namespace: team-a
` + allMeta + `spec:
  runtimeRef: {name: every-runtime, apiGroup: trainer.kubeflow.org, kind: TrainingRuntime}
  initializer:
    dataset:
      storageUri: hf://tatsu-lab/alpaca
      env: [{name: A, value: "1"}]
      secretRef: {name: hf}
    model:
      storageUri: hf://org/model
      env: [{name: B, value: "2"}]
      secretRef: {name: hf}
  trainer:
    image: python:3.11-slim
    command: [python3, -c, "print(1)"]
    args: [--epochs, "1"]
    env: [{name: LR, value: "0.1"}]
    numNodes: 2
    resourcesPerNode: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}
    numProcPerNode: 1
  runtimePatches:
  - manager: example.com/tool
    time: "2026-01-02T03:04:05Z"
    trainingRuntimeSpec:
      template:
        metadata: {labels: {jobset: x}}
        spec:
          replicatedJobs:
          - name: node
            template:
              metadata: {labels: {job: x}}
              spec:
                template:
                  metadata:
                    name: pod
                    generateName: pod-
                    namespace: elsewhere
                    labels: {pod: x}
                    annotations: {pod: z}
                    uid: u
                  spec:
                    serviceAccountName: trainer
                    volumes: [{name: data, emptyDir: {}}]
                    initContainers: [{name: warm, env: [{name: C, value: "3"}]}]
                    containers:
                    - name: node
                      volumeMounts: [{name: data, mountPath: /data}]
                      securityContext: {runAsUser: 1000}
                    imagePullSecrets: [{name: registry}]
                    securityContext: {fsGroup: 1000}
                    nodeSelector: {pool: gpu}
                    affinity: {}
                    tolerations: [{key: gpu, operator: Exists}]
                    schedulingGates: [{name: example.com/gate}]
                    terminationGracePeriodSeconds: 30
  suspend: false
  activeDeadlineSeconds: 600
  managedBy: trainer.kubeflow.org/trainjob-controller
status:
  conditions: [{type: Complete, status: "True", reason: Done, message: done, lastTransitionTime: "2026-01-02T03:04:05Z"}]
  jobsStatus: [{name: node, ready: 1, succeeded: 0, failed: 0, active: 1, suspended: 0}]
  trainerStatus:
    progressPercentage: 50
    estimatedRemainingSeconds: 60
    metrics: [{name: loss, value: "0.1"}]
    lastUpdatedTime: "2026-01-02T03:04:05Z"
`
	// allRuntime sets every field but one framework of mlPolicy, and
	// every JobSet field.
	allRuntime = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: every-runtime
  namespace: team-a
` + allMeta + `spec:
  mlPolicy:
    numNodes: 1
    torch:
      envInjection:
        targets:
        - jobName: dataset-initializer
          containerNames: [dataset-initializer]
  podGroupPolicy:
    volcano:
      networkTopology: {mode: hard, highestTierAllowed: 2, highestTierName: spine}
  template:
    metadata: {labels: {jobset: x}, annotations: {jobset: z}}
    spec:
      network: {enableDNSHostnames: true, subdomain: trainers, publishNotReadyAddresses: true}
      successPolicy: {operator: All, targetReplicatedJobs: [node]}
      failurePolicy:
        maxRestarts: 2
        restartStrategy: BlockingRecreate
        rules:
        - name: fail-fast
          action: FailJobSet
          onJobFailureReasons: [PodFailurePolicy]
          onJobFailureMessagePatterns: [".*"]
          targetReplicatedJobs: [node]
      startupPolicy: {startupPolicyOrder: InOrder}
      suspend: false
      coordinator: {replicatedJob: node, jobIndex: 0, podIndex: 0}
      managedBy: jobset.sigs.k8s.io/jobset-controller
      ttlSecondsAfterFinished: 60
      volumeClaimPolicies:
      - templates:
        - metadata: {name: scratch}
          spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
        retentionPolicy: {whenDeleted: Delete}
      replicatedJobs:
      - name: dataset-initializer
        groupName: init
        replicas: 1
        template:
          spec:
            template:
              spec:
                containers: [{name: dataset-initializer, image: ghcr.io/kubeflow/trainer/dataset-initializer}]
      - name: node
        groupName: trainers
        replicas: 1
        dependsOn: [{name: dataset-initializer, status: Complete}]
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            backoffLimit: 0
            parallelism: 1
            template:
              spec:
                containers: [{name: node, image: pytorch/pytorch, command: [python3, train.py]}]
`
)

// The frameworks of mlPolicy one at a time, with their v2.3 fields (and
// v2.1's torch fields, still read).
var allFrameworks = map[string]string{
	"torch":   `{numProcPerNode: 2, elasticPolicy: {maxRestarts: 1, minNodes: 1, maxNodes: 2}, envInjection: {targets: [{jobName: model-initializer, containerNames: [m]}]}}`,
	"mpi":     `{numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /home/mpiuser/.ssh, runLauncherAsNode: true}`,
	"jax":     `{}`,
	"xgboost": `{}`,
	"flux":    `{numProcPerNode: 1}`,
}

// TestTrainerV23FieldsAreNeverUnknown reads every field of Trainer
// v2.3.0's documents and checks none is refused as unknown (KLN-1002):
// each is honoured, named as ignored, or refused with its own reason.
func TestTrainerV23FieldsAreNeverUnknown(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"TrainJob": allTrainJob, "TrainingRuntime": allRuntime,
		"ClusterTrainingRuntime": strings.Replace(allRuntime, "kind: TrainingRuntime", "kind: ClusterTrainingRuntime", 1),
	}
	for name, fw := range allFrameworks {
		docs["framework "+name] = strings.Replace(allRuntime, "    torch:\n      envInjection:\n        targets:\n        - jobName: dataset-initializer\n          containerNames: [dataset-initializer]\n",
			"    "+name+": "+fw+"\n", 1)
	}
	for name, text := range docs {
		read, err := Read("all.yaml", strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s: read: %v", name, err)
		}
		_, err = Translate(read)
		for _, e := range apiv1.Errors(err) {
			if e.Code == apiv1.CodeUnknownField || e.Code == apiv1.CodeParse {
				t.Errorf("%s: %s", name, e)
			}
		}
		if name == "framework flux" && !hasCode(err, apiv1.CodeUnsupported, "spec.mlPolicy.flux") {
			t.Errorf("flux: %v, want KLN-1026 naming spec.mlPolicy.flux", err)
		} else if name != "framework flux" && err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func hasCode(err error, code apiv1.Code, field string) bool {
	return slices.ContainsFunc(apiv1.Errors(err), func(e *apiv1.Error) bool { return e.Code == code && e.Field == field })
}

// TestTrainerV23FieldsKilnDoesNotUseAreNamed checks that the v2.3 fields
// kiln does not act on are named as ignored, on the backends that ignore
// them, rather than passed over in silence.
func TestTrainerV23FieldsKilnDoesNotUseAreNamed(t *testing.T) {
	t.Parallel()
	read, err := Read("all.yaml", strings.NewReader(allRuntime+"---\n"+allTrainJob))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Translate(read)
	if err != nil {
		t.Fatal(err)
	}
	ignored := map[string]Ignored{}
	for _, i := range IgnoredFields(&docs[0], &docs[1]) {
		ignored[i.Field] = i
	}
	every := []string{
		"metadata.uid", "metadata.resourceVersion", "metadata.generation", "metadata.creationTimestamp",
		"metadata.deletionTimestamp", "metadata.deletionGracePeriodSeconds", "metadata.ownerReferences",
		"metadata.finalizers", "metadata.managedFields", "metadata.selfLink", "metadata.generateName",
		"spec.mlPolicy.torch.envInjection", "spec.template.metadata", "spec.template.spec.suspend",
		"spec.template.spec.managedBy", "spec.template.spec.ttlSecondsAfterFinished", "spec.template.spec.volumeClaimPolicies",
		"spec.template.spec.network", "spec.template.spec.successPolicy", "spec.template.spec.startupPolicy", "spec.template.spec.coordinator",
		"spec.template.spec.failurePolicy.rules", "spec.template.spec.failurePolicy.restartStrategy",
		"spec.template.spec.replicatedJobs[0].groupName", "spec.template.spec.replicatedJobs[1].groupName",
		"spec.template.spec.replicatedJobs[1].template.metadata", "spec.template.spec.replicatedJobs[1].template.spec.backoffLimit",
		"spec.template.spec.replicatedJobs[1].template.spec.parallelism",
		"spec.runtimePatches[0].trainingRuntimeSpec.template.metadata",
		"spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.metadata",
		"spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.metadata.name",
		"spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.metadata.namespace",
		"spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.metadata.uid",
		"status",
	}
	for _, f := range every {
		if i, ok := ignored[f]; !ok || i.Reason == "" {
			t.Errorf("%s is not named as ignored (got %v)", f, ignored[f])
		}
	}
	if i, ok := ignored["spec.podGroupPolicy.volcano.networkTopology"]; !ok || len(i.Backends) != 0 {
		t.Errorf("networkTopology ignored %v on %v, want on every backend", ok, i.Backends)
	}
	if _, ok := ignored["spec.template.spec.replicatedJobs[1].dependsOn"]; ok {
		t.Errorf("the node job's dependsOn on the dataset initializer is kiln's own order, yet named as ignored")
	}
	if docs[1].Name != "everything" || docs[0].Name != "every-runtime" {
		t.Errorf("names %q %q", docs[0].Name, docs[1].Name)
	}
	for _, d := range docs {
		var m struct {
			Metadata apiv1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(d.JSON, &m); err != nil || m.Metadata.Namespace != "team-a" {
			t.Errorf("%s translated keeps namespace %q (%v), want team-a: kiln convert prints it, kiln run reads it as the project", d.Object(), m.Metadata.Namespace, err)
		}
	}
}

// TestTrainerGenerateNameNamesTheJob reads a TrainJob with generateName
// only, as kubectl create writes them.
func TestTrainerGenerateNameNamesTheJob(t *testing.T) {
	t.Parallel()
	read, err := Read("g.yaml", strings.NewReader("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {generateName: mnist-}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {command: [python3, t.py]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Translate(read)
	if err != nil || len(docs) != 1 || docs[0].Name != "mnist" || docs[0].Object() != "TrainJob/mnist" {
		t.Fatalf("docs %+v err %v, want TrainJob/mnist", docs, err)
	}
}

// TestTrainerKueueQueueOwnsSuspend reads upstream's Kueue example shape:
// the queue label and spec.suspend: true. Kueue admits the job by
// unsuspending it, so kiln must not hold the run for kiln resume; the
// label stays on the job for the Kubernetes backend.
func TestTrainerKueueQueueOwnsSuspend(t *testing.T) {
	t.Parallel()
	checked, errs := compileFiles(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: kueue-example
  labels: {kueue.x-k8s.io/queue-name: training-queue}
spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-distributed}
  suspend: true
  trainer: {numNodes: 3, command: [python3, -c, "print('Training started via Kueue')"]}
`)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	c := checked[0]
	if c.Plan.Suspend {
		t.Errorf("the run is held for kiln resume; Kueue's suspend is not kiln's")
	}
	if got := c.Plan.Workflow.Metadata.Labels["kueue.x-k8s.io/queue-name"]; got != "training-queue" {
		t.Errorf("queue label %q on the translated job, want training-queue", got)
	}
	var local, kube []string
	for _, i := range IgnoredOn(backendLocal, c.Ignored) {
		local = append(local, i.Field)
	}
	for _, i := range IgnoredOn(backendKube, c.Ignored) {
		kube = append(kube, i.Field)
	}
	label := "metadata.labels[kueue.x-k8s.io/queue-name]"
	labels := 0
	for _, f := range local {
		if f == label {
			labels++
		}
	}
	if labels != 1 || !slices.Contains(local, "spec.suspend") {
		t.Errorf("ignored locally %v, want the queue label once and spec.suspend", local)
	}
	if slices.Contains(kube, "metadata.labels[kueue.x-k8s.io/queue-name]") || slices.Contains(kube, "spec.suspend") {
		t.Errorf("the kubernetes backend, which hands the job to Kueue, is said to ignore %v", kube)
	}
}

// TestTrainerTypesHoldEveryV23Field compares kiln's wire types with the
// JSON names of Trainer v2.3.0's (pkg/apis/trainer/v1alpha1) and JobSet
// v0.12's, listed here by hand: each upstream field has its place, so
// none can be refused as unknown.
func TestTrainerTypesHoldEveryV23Field(t *testing.T) {
	t.Parallel()
	meta := []string{
		"name", "generateName", "namespace", "labels", "annotations", "uid", "resourceVersion", "generation",
		"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "managedFields", "selfLink",
	}
	upstream := []struct {
		typ    any
		fields []string
	}{
		{trainerv1.TrainJob{}, []string{"apiVersion", "kind", "metadata", "spec", "status"}},
		{trainerv1.ObjectMeta{}, meta},
		{trainerv1.PodMetadata{}, meta},
		{trainerv1.TrainJobSpec{}, []string{"runtimeRef", "initializer", "trainer", "runtimePatches", "suspend", "activeDeadlineSeconds", "managedBy"}},
		{trainerv1.RuntimeRef{}, []string{"name", "apiGroup", "kind"}},
		{trainerv1.Initializer{}, []string{"dataset", "model"}},
		{trainerv1.InitializerSource{}, []string{"storageUri", "env", "secretRef"}},
		{trainerv1.Trainer{}, []string{"image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode"}},
		{trainerv1.RuntimePatch{}, []string{"manager", "time", "trainingRuntimeSpec"}},
		{trainerv1.TrainingRuntimeSpecPatch{}, []string{"template"}},
		{trainerv1.JobSetTemplatePatch{}, []string{"metadata", "spec"}},
		{trainerv1.JobSetSpecPatch{}, []string{"replicatedJobs"}},
		{trainerv1.ReplicatedJobPatch{}, []string{"name", "template"}},
		{trainerv1.JobTemplatePatch{}, []string{"metadata", "spec"}},
		{trainerv1.JobSpecPatch{}, []string{"template"}},
		{trainerv1.PodTemplatePatch{}, []string{"metadata", "spec"}},
		{trainerv1.PodSpecOverride{}, []string{
			"serviceAccountName", "volumes", "initContainers", "containers", "imagePullSecrets", "securityContext",
			"nodeSelector", "affinity", "tolerations", "schedulingGates", "terminationGracePeriodSeconds",
		}},
		{trainerv1.ContainerOverride{}, []string{"name", "env", "volumeMounts", "securityContext"}},
		{trainerv1.TrainingRuntime{}, []string{"apiVersion", "kind", "metadata", "spec"}},
		{trainerv1.TrainingRuntimeSpec{}, []string{"mlPolicy", "podGroupPolicy", "template"}},
		{trainerv1.JobSetTemplateSpec{}, []string{"metadata", "spec"}},
		{trainerv1.PodGroupPolicy{}, []string{"coscheduling", "volcano"}},
		{trainerv1.Coscheduling{}, []string{"scheduleTimeoutSeconds"}},
		{trainerv1.Volcano{}, []string{"networkTopology"}},
		{trainerv1.NetworkTopology{}, []string{"mode", "highestTierAllowed", "highestTierName"}},
		{trainerv1.MLPolicy{}, []string{"numNodes", "torch", "mpi", "flux", "jax", "xgboost"}},
		{trainerv1.TorchMLPolicySource{}, []string{"envInjection"}},
		{trainerv1.EnvInjection{}, []string{"targets"}},
		{trainerv1.EnvInjectionTarget{}, []string{"jobName", "containerNames"}},
		{trainerv1.MPIMLPolicySource{}, []string{"numProcPerNode", "mpiImplementation", "sshAuthMountPath", "runLauncherAsNode"}},
		{trainerv1.FluxMLPolicySource{}, []string{"numProcPerNode"}},
		// JobSet v0.12's JobSetSpec and ReplicatedJob.
		{trainerv1.JobSetSpec{}, []string{
			"replicatedJobs", "network", "successPolicy", "failurePolicy", "startupPolicy", "suspend",
			"coordinator", "managedBy", "ttlSecondsAfterFinished", "volumeClaimPolicies",
		}},
		{trainerv1.ReplicatedJob{}, []string{"name", "groupName", "template", "replicas", "dependsOn"}},
	}
	for _, u := range upstream {
		typ := reflect.TypeOf(u.typ)
		have := jsonFields(typ)
		for _, f := range u.fields {
			if _, ok := have[f]; !ok {
				t.Errorf("%s lacks upstream field %q", typ.Name(), f)
			}
		}
	}
}
