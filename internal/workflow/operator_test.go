package workflow

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// readYAML reads text as the file job.yaml.
func readYAML(t *testing.T, text string) []Document {
	t.Helper()
	docs, err := Read("job.yaml", strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return docs
}

// converted translates text and decodes the runtime and TrainJob it
// becomes, checking them as kiln would.
func converted(t *testing.T, text string) (*apiv1.TrainingRuntime, *apiv1.TrainJob, []Ignored) {
	t.Helper()
	out, ignored, err := Convert([]string{"job.yaml"}, readYAML(t, text))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	if len(out) != 2 || out[0].Kind != apiv1.KindTrainingRuntime || out[1].Kind != apiv1.KindTrainJob {
		t.Fatalf("translated into %d documents, want a TrainingRuntime and a TrainJob", len(out))
	}
	rt, tj := &apiv1.TrainingRuntime{}, &apiv1.TrainJob{}
	if err := json.Unmarshal(out[0].JSON, rt); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out[1].JSON, tj); err != nil {
		t.Fatal(err)
	}
	if tj.Spec.RuntimeRef.Name != rt.Metadata.Name {
		t.Errorf("the TrainJob runs %q, not its runtime %q", tj.Spec.RuntimeRef.Name, rt.Metadata.Name)
	}
	return rt, tj, ignored
}

func q(s string) *apiv1.Quantity { v := apiv1.Quantity(s); return &v }
func i32(n int32) *int32         { return &n }

// replica is a replica spec of n replicas running the container ct.
func replicaYAML(name string, n int, ct string) string {
	return "    " + name + ":\n      replicas: " + itoa(n) + "\n      template:\n        spec:\n          containers:\n          - " + ct + "\n"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

const torchCt = "{name: pytorch, image: 'img:1', command: [python3, train.py], env: [{name: LR, value: '0.1'}], resources: {requests: {cpu: '2', memory: 1Gi}}}"

func TestPyTorchJobBecomesATrainJobWithTheOperatorsEnvironment(t *testing.T) {
	t.Parallel()
	rt, tj, ignored := converted(t, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: mnist, namespace: ml}\nspec:\n"+
		"  runPolicy: {backoffLimit: 2, ttlSecondsAfterFinished: 60, schedulingPolicy: {scheduleTimeoutSeconds: 30, minAvailable: 3}}\n"+
		"  pytorchReplicaSpecs:\n"+replicaYAML("Master", 1, torchCt)+replicaYAML("worker", 2, torchCt))
	wantTrainer := &apiv1.Trainer{
		Command: []string{"python3", "train.py"}, Env: []apiv1.EnvVar{{Name: "LR", Value: "0.1"}}, Image: "img:1",
		NumNodes: i32(3), NumProcPerNode: q("auto"), ResourcesPerNode: &apiv1.Resources{CPU: "2", Memory: "1Gi"},
	}
	if diff := cmp.Diff(wantTrainer, tj.Spec.Trainer); diff != "" {
		t.Errorf("trainer (-want +got):\n%s", diff)
	}
	// The operator's defaults, where kiln's differ: a PyTorchJob's replicas
	// restart OnFailure, and its pods are left as they are (None).
	wantRun := &apiv1.RunPolicy{
		BackoffLimit: i32(2), TTLSecondsAfterFinished: i32(60),
		JobPolicy: apiv1.JobPolicy{CleanPodPolicy: apiv1.CleanPodPolicyNone, RestartPolicy: apiv1.RestartPolicyOnFailure},
	}
	if diff := cmp.Diff(wantRun, tj.Spec.RunPolicy); diff != "" {
		t.Errorf("runPolicy (-want +got):\n%s", diff)
	}
	wantPolicy := &apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{}, TrainingOperator: &apiv1.OperatorEnv{Leader: "Master"}}
	if diff := cmp.Diff(wantPolicy, rt.Spec.MLPolicy); diff != "" {
		t.Errorf("mlPolicy (-want +got):\n%s", diff)
	}
	if rt.Spec.GangPolicy == nil || *rt.Spec.GangPolicy.ScheduleTimeoutSeconds != 30 {
		t.Errorf("gangPolicy %+v, want the schedulingPolicy's 30s", rt.Spec.GangPolicy)
	}
	if rt.Metadata.Name != "mnist-pytorchjob" || tj.Metadata.Name != "mnist" {
		t.Errorf("names %q and %q, want mnist-pytorchjob and mnist", rt.Metadata.Name, tj.Metadata.Name)
	}
	fields := map[string]bool{}
	for _, i := range ignored {
		fields[i.Field] = true
	}
	for _, f := range []string{"spec.pytorchReplicaSpecs.Master.template.spec.containers[0].image"} {
		if !fields[f] {
			t.Errorf("%s is not among the ignored fields %v", f, ignored)
		}
	}
}

func TestTFJobCountsChiefWorkersAndParameterServers(t *testing.T) {
	t.Parallel()
	ct := "{name: tensorflow, image: 'tf:2', command: [python3, tf.py]}"
	rt, tj, _ := converted(t, "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {generateName: dist-}\nspec:\n  tfReplicaSpecs:\n"+
		replicaYAML("Chief", 1, ct)+replicaYAML("Worker", 2, ct)+replicaYAML("PS", 1, ct))
	if *tj.Spec.Trainer.NumNodes != 3 || tj.Metadata.Name != "dist" {
		t.Errorf("numNodes %d name %q, want 3 (chief and workers) and dist (from generateName)", *tj.Spec.Trainer.NumNodes, tj.Metadata.Name)
	}
	want := &apiv1.MLPolicy{TensorFlow: &apiv1.TensorFlowPolicy{NumPS: i32(1)}, TrainingOperator: &apiv1.OperatorEnv{Leader: "Chief"}}
	if diff := cmp.Diff(want, rt.Spec.MLPolicy); diff != "" {
		t.Errorf("mlPolicy (-want +got):\n%s", diff)
	}
}

func TestMPIJobRunsTheLaunchersCommandOnTheWorkers(t *testing.T) {
	t.Parallel()
	rt, tj, ignored := converted(t, "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: hvd}\nspec:\n  slotsPerWorker: 2\n  mpiReplicaSpecs:\n"+
		replicaYAML("Launcher", 1, "{name: launcher, image: 'mpi:1', command: [mpirun, -np, '4', python3, a.py]}")+
		replicaYAML("Worker", 2, "{name: worker, image: 'mpi:1', command: [/usr/sbin/sshd, -De], resources: {limits: {nvidia.com/gpu: 1}}}"))
	want := &apiv1.Trainer{
		Command: []string{"mpirun", "-np", "4", "python3", "a.py"}, Image: "mpi:1",
		NumNodes: i32(2), NumProcPerNode: q("2"), ResourcesPerNode: &apiv1.Resources{GPU: "1"},
	}
	if diff := cmp.Diff(want, tj.Spec.Trainer); diff != "" {
		t.Errorf("trainer (-want +got):\n%s", diff)
	}
	if rt.Spec.MLPolicy.MPI == nil {
		t.Errorf("mlPolicy %+v is not mpi", rt.Spec.MLPolicy)
	}
	found := false
	for _, i := range ignored {
		found = found || i.Field == "spec.mpiReplicaSpecs.Worker.template.spec.containers[0].command"
	}
	if !found {
		t.Errorf("the workers' sshd command is not among the ignored fields %v", ignored)
	}
}

func TestXGBoostAndJAXJobs(t *testing.T) {
	t.Parallel()
	xct := "{name: xgboost, command: [python3, x.py]}"
	rt, tj, _ := converted(t, "apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nmetadata: {name: xgb}\nspec:\n  xgbReplicaSpecs:\n"+
		replicaYAML("Master", 1, xct)+replicaYAML("Worker", 2, xct))
	if *tj.Spec.Trainer.NumNodes != 3 || rt.Spec.MLPolicy.XGBoost == nil || rt.Spec.MLPolicy.TrainingOperator.Leader != "Master" {
		t.Errorf("XGBoostJob: numNodes %d policy %+v, want 3 and xgboost led by its Master", *tj.Spec.Trainer.NumNodes, rt.Spec.MLPolicy)
	}
	rt, tj, _ = converted(t, "apiVersion: kubeflow.org/v1\nkind: JAXJob\nmetadata: {name: jx}\nspec:\n  jaxReplicaSpecs:\n"+
		replicaYAML("Worker", 2, "{name: jax, command: [python3, j.py]}"))
	if *tj.Spec.Trainer.NumNodes != 2 || rt.Spec.MLPolicy.JAX == nil || rt.Spec.MLPolicy.TrainingOperator == nil {
		t.Errorf("JAXJob: numNodes %d policy %+v, want 2 and jax with the operator's environment", *tj.Spec.Trainer.NumNodes, rt.Spec.MLPolicy)
	}
}

func TestPodFieldsBecomeThePodTemplate(t *testing.T) {
	t.Parallel()
	ct := "{name: pytorch, image: 'img:1', command: [python3, t.py], ports: [{name: pytorchjob-port, containerPort: 23456}], volumeMounts: [{name: data, mountPath: /data}]}"
	pod := "      template:\n        metadata: {annotations: {team: vision}}\n        spec:\n          nodeSelector: {gpu: a100}\n          volumes: [{name: data, emptyDir: {}}]\n          containers:\n          - " + ct + "\n"
	_, tj, ignored := converted(t, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n  pytorchReplicaSpecs:\n    Master:\n"+pod+"    Worker:\n"+pod)
	pt := tj.Spec.PodTemplate
	if pt == nil || pt.Spec == nil || pt.Spec.NodeSelector["gpu"] != "a100" || pt.Metadata.Annotations["team"] != "vision" {
		t.Fatalf("pod template %+v lacks the pod's node selector and annotations", pt)
	}
	if c := pt.Spec.Containers; len(c) != 1 || c[0].Name != apiv1.MainContainer || len(c[0].VolumeMounts) != 1 || len(c[0].Ports) != 0 || c[0].Image != "" {
		t.Errorf("containers %+v, want kiln's main with the mounts only", c)
	}
	var ports bool
	for _, i := range ignored {
		ports = ports || strings.HasSuffix(i.Field, ".ports")
	}
	if !ports {
		t.Errorf("the container's ports are not among the ignored fields %v", ignored)
	}
}

func TestOperatorJobErrorsNameTheFieldsAsWritten(t *testing.T) {
	t.Parallel()
	head := "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n"
	specs := "  pytorchReplicaSpecs:\n"
	good := replicaYAML("Master", 1, torchCt) + replicaYAML("Worker", 1, torchCt)
	cases := map[string]struct {
		text string
		want []problem
	}{
		"two masters": {
			head + specs + replicaYAML("Master", 2, torchCt),
			[]problem{{apiv1.CodeReplicaSpecs, "spec.pytorchReplicaSpecs.Master.replicas"}},
		},
		"a replica type pytorch has not": {
			head + specs + good + replicaYAML("Launcher", 1, torchCt),
			[]problem{{apiv1.CodeReplicaSpecs, "spec.pytorchReplicaSpecs.Launcher"}},
		},
		"master and worker of different images": {
			head + specs + replicaYAML("Master", 1, torchCt) + replicaYAML("Worker", 1, strings.Replace(torchCt, "img:1", "img:2", 1)),
			[]problem{{apiv1.CodeReplicasDiffer, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].image"}},
		},
		"a second container": {
			head + specs + replicaYAML("Worker", 1, torchCt+"\n          - {name: sidecar, image: 'x:1'}"),
			[]problem{{apiv1.CodeMainContainer, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[1]"}},
		},
		"no container named pytorch": {
			head + specs + replicaYAML("Worker", 1, "{name: main, command: [x]}"),
			[]problem{{apiv1.CodeMainContainer, "spec.pytorchReplicaSpecs.Worker.template.spec.containers"}},
		},
		"elastic without torchrun": {
			head + "  elasticPolicy: {minReplicas: 1, maxReplicas: 2}\n" + specs + replicaYAML("Worker", 2, torchCt),
			[]problem{{apiv1.CodeElasticCommand, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].command"}},
		},
		"elastic through etcd": {
			head + "  elasticPolicy: {minReplicas: 1, maxReplicas: 2, rdzvBackend: etcd}\n" + specs + replicaYAML("Worker", 2, strings.Replace(torchCt, "python3", "torchrun", 1)),
			[]problem{{apiv1.CodeUnsupported, "spec.elasticPolicy.rdzvBackend"}},
		},
		"elastic with more at least than at most": {
			head + "  elasticPolicy: {minReplicas: 3, maxReplicas: 2}\n" + specs + replicaYAML("Worker", 2, strings.Replace(torchCt, "python3", "torchrun", 1)),
			[]problem{{apiv1.CodeElasticRange, "spec.elasticPolicy.minReplicas"}},
		},
		"a queue": {
			head + "  runPolicy: {schedulingPolicy: {queue: research}}\n" + specs + good,
			[]problem{{apiv1.CodeUnsupported, "spec.runPolicy.schedulingPolicy.queue"}},
		},
		"a worker of no command where the master has one": {
			head + specs + replicaYAML("Master", 1, torchCt) + replicaYAML("Worker", 1, "{name: pytorch, image: 'img:1', env: [{name: LR, value: '0.1'}], resources: {requests: {cpu: '2', memory: 1Gi}}}"),
			[]problem{{apiv1.CodeReplicasDiffer, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].args"}},
		},
		"a worker's restart policy kiln has not": {
			head + specs + replicaYAML("Master", 1, torchCt) + strings.Replace(replicaYAML("Worker", 1, torchCt), "      template:", "      restartPolicy: Sometimes\n      template:", 1),
			[]problem{{apiv1.CodeRunPolicyValue, "spec.pytorchReplicaSpecs.Worker.restartPolicy"}},
		},
		"a worker's own variable the operator sets": {
			head + specs + replicaYAML("Master", 1, torchCt) + replicaYAML("Worker", 1, strings.Replace(torchCt, "LR", "PET_NNODES", 1)),
			[]problem{{apiv1.CodeReservedEnv, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].env[0].name"}},
		},
		"a PaddleJob in parameter-server mode": {
			"apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: x}\nspec:\n  paddleReplicaSpecs:\n" +
				replicaYAML("Master", 1, "{name: paddle, command: [x]}") + replicaYAML("Worker", 2, "{name: paddle, command: [x]}"),
			[]problem{{apiv1.CodeUnsupported, "spec.paddleReplicaSpecs.Master"}},
		},
		"a clean pod policy kiln has not": {
			head + "  runPolicy: {cleanPodPolicy: Some}\n" + specs + good,
			[]problem{{apiv1.CodeRunPolicyValue, "spec.runPolicy.cleanPodPolicy"}},
		},
		"a misspelt field": {
			head + specs + replicaYAML("Worker", 1, "{name: pytorch, comand: [x]}"),
			[]problem{{apiv1.CodeUnknownField, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].comand"}},
		},
		"a variable the operator sets": {
			head + specs + replicaYAML("Worker", 1, "{name: pytorch, command: [x], env: [{name: PET_NNODES, value: '4'}]}"),
			[]problem{{apiv1.CodeReservedEnv, "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].env[0].name"}},
		},
		"nprocPerNode not a number": {
			head + "  nprocPerNode: many\n" + specs + good,
			[]problem{{apiv1.CodeInvalidValue, "spec.nprocPerNode"}},
		},
		"an MPIJob's launcher of no command": {
			"apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: m}\nspec:\n  mpiReplicaSpecs:\n" +
				replicaYAML("Launcher", 1, "{name: l, image: 'img:1', args: [x]}") + replicaYAML("Worker", 1, "{name: w, image: 'img:1'}"),
			[]problem{{apiv1.CodeRequired, "spec.mpiReplicaSpecs.Launcher.template.spec.containers[0].command"}},
		},
		"no replicas at all": {
			head + specs + replicaYAML("Worker", 0, torchCt),
			[]problem{{apiv1.CodeReplicaSpecs, "spec.pytorchReplicaSpecs.Worker.replicas"}},
		},
		"too many nodes": {
			head + specs + replicaYAML("Worker", 5000, torchCt),
			[]problem{{apiv1.CodeOutOfRange, "spec.pytorchReplicaSpecs.Worker.replicas"}},
		},
		"a TFJob's evaluator and success policy": {
			"apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t}\nspec:\n  successPolicy: AllWorkers\n  tfReplicaSpecs:\n" +
				replicaYAML("Worker", 1, "{name: tensorflow, command: [x]}") + replicaYAML("Evaluator", 1, "{name: tensorflow, command: [x]}"),
			[]problem{{apiv1.CodeUnsupported, "spec.tfReplicaSpecs.Evaluator"}, {apiv1.CodeUnsupported, "spec.successPolicy"}},
		},
		"an MPIJob of no slots": {
			"apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: m}\nspec:\n  slotsPerWorker: 0\n  mpiReplicaSpecs:\n" +
				replicaYAML("Launcher", 1, "{name: l, command: [mpirun, x]}") + replicaYAML("Worker", 1, "{name: w}"),
			[]problem{{apiv1.CodeOutOfRange, "spec.slotsPerWorker"}},
		},
		"an XGBoostJob without its master": {
			"apiVersion: kubeflow.org/v1\nkind: XGBoostJob\nmetadata: {name: x}\nspec:\n  xgbReplicaSpecs:\n" + replicaYAML("Worker", 2, "{name: xgboost, command: [x]}"),
			[]problem{{apiv1.CodeReplicaSpecs, "spec.xgbReplicaSpecs"}},
		},
		"a kind kiln does not read": {
			"apiVersion: kubeflow.org/v1\nkind: MXJob\nmetadata: {name: x}\nspec: {}\n",
			[]problem{{apiv1.CodeKind, "kind"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Convert([]string{"job.yaml"}, readYAML(t, tc.text))
			got := problems(t, apiv1.Errors(err), "job.yaml", "")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%v", diff, err)
			}
		})
	}
}

// TestElasticPyTorchJobRunsFromMinToMaxReplicas checks elasticPolicy
// becomes kiln's elastic torch policy.
func TestElasticPyTorchJobRunsFromMinToMaxReplicas(t *testing.T) {
	t.Parallel()
	text := "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n" +
		"  elasticPolicy: {minReplicas: 2, maxReplicas: 4, maxRestarts: 5, rdzvBackend: c10d}\n  pytorchReplicaSpecs:\n" +
		replicaYAML("Worker", 3, strings.Replace(torchCt, "python3", "torchrun", 1))
	checked, errs := compileFiles(t, text)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	task := checked[0].Plan.Tasks[0]
	if task.MinHosts != 2 || task.Train.NumNodes != 4 {
		t.Errorf("hosts from %d to %d, want 2 to 4", task.MinHosts, task.Train.NumNodes)
	}
	e := task.Train.Elastic
	if e == nil || e.MaxRestarts != 5 {
		t.Errorf("elastic %+v, want maxRestarts 5", e)
	}
}
