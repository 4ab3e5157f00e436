package workflow

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const trainerHead = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj, namespace: team-a}\n"

// TestTrainerTrainJobRunsAsKilnsOwn reads a TrainJob written as Trainer's
// documentation writes one and checks what kiln runs of it.
func TestTrainerTrainJobRunsAsKilnsOwn(t *testing.T) {
	t.Parallel()
	checked, errs := compileFiles(t, trainerHead+`spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-distributed}
  suspend: true
  activeDeadlineSeconds: 600
  managedBy: trainer.kubeflow.org/trainjob-controller
  labels: {team: vision}
  trainer:
    image: pytorch/pytorch
    command: [torchrun, train.py]
    env:
    - {name: LR, value: "0.1"}
    - name: HF_TOKEN
      valueFrom: {secretKeyRef: {name: hf, key: token}}
    numNodes: 3
    numProcPerNode: 2
    resourcesPerNode:
      requests: {cpu: 1500m, memory: 1Gi}
      limits: {cpu: "2", nvidia.com/gpu: 1}
`)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	c := checked[0]
	task := c.Plan.Tasks[0]
	if task.Train.NumNodes != 3 || task.Train.NumProcPerNode != 2 {
		t.Errorf("nodes %d x %d procs, want 3 x 2", task.Train.NumNodes, task.Train.NumProcPerNode)
	}
	if got := task.Train.PerNode; got.MilliCPU != 1500 || got.Memory != 1<<30 || got.GPU != 1 {
		t.Errorf("per node %+v, want the requests, the limit's GPU", got)
	}
	if !c.Plan.Suspend || c.Plan.Workflow.Spec.Timeout != "600s" {
		t.Errorf("suspend %v timeout %q, want true and 600s", c.Plan.Suspend, c.Plan.Workflow.Spec.Timeout)
	}
	env := c.Plan.Workflow.Spec.Tasks[0].Train.Env
	if len(env) != 2 || env[1].ValueFrom == nil || env[1].ValueFrom.Secret != "hf.token" {
		t.Errorf("env %+v, want HF_TOKEN from the secret hf.token", env)
	}
	if c.Doc.Object() != "TrainJob/tj" || NamespaceOf(c.Doc) != "team-a" {
		t.Errorf("object %s namespace %q", c.Doc.Object(), NamespaceOf(c.Doc))
	}
	var local []string
	for _, i := range IgnoredOn("local", c.Ignored) {
		local = append(local, i.Field)
	}
	if want := []string{"spec.trainer.resourcesPerNode.limits.cpu", "spec.trainer.image", "spec.labels"}; !cmp.Equal(local, want) {
		t.Errorf("ignored locally %v, want %v", local, want)
	}
	pt := c.Plan.Workflow.Spec.Tasks[0].PodTemplate
	if pt == nil || pt.Spec == nil || len(pt.Spec.Containers) != 1 || pt.Spec.Containers[0].Resources.Limits.Cpu().String() != "2" {
		t.Errorf("pod template %+v, want the main container limited to 2 CPUs", pt)
	}
	if kube := IgnoredOn("kubernetes", c.Ignored); len(kube) != 0 {
		t.Errorf("the kubernetes backend ignores %v, want nothing", kube)
	}
}

// TestTrainerFieldsKilnCannotHonourAreErrorsNamingThem checks that every
// problem of a Trainer document names the field as Trainer names it.
func TestTrainerFieldsKilnCannotHonourAreErrorsNamingThem(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		spec string
		want []problem
	}{
		"unknown field": {
			"  runtimeRef: {name: torch-distributed}\n  trainer: {command: [x], numNode: 2}\n",
			[]problem{{apiv1.CodeUnknownField, "spec.trainer.numNode"}},
		},
		"wrong api group": {
			"  runtimeRef: {name: torch-distributed, apiGroup: example.com}\n  trainer: {command: [x]}\n",
			[]problem{{apiv1.CodeRuntimeRef, "spec.runtimeRef.apiGroup"}},
		},
		"wrong runtime kind": {
			"  runtimeRef: {name: torch-distributed, kind: JobSet}\n  trainer: {command: [x]}\n",
			[]problem{{apiv1.CodeRuntimeRef, "spec.runtimeRef.kind"}},
		},
		"missing runtime": {
			"  runtimeRef: {name: no-such}\n  trainer: {command: [x]}\n",
			[]problem{{apiv1.CodeUnknownRuntime, "spec.runtimeRef.name"}},
		},
		"managed by multikueue": {
			"  runtimeRef: {name: torch-distributed}\n  managedBy: kueue.x-k8s.io/multikueue\n  trainer: {command: [x]}\n",
			[]problem{{apiv1.CodeUnsupported, "spec.managedBy"}},
		},
		"a config map env": {
			"  runtimeRef: {name: torch-distributed}\n  trainer:\n    command: [x]\n    env: [{name: A, valueFrom: {configMapKeyRef: {name: c, key: k}}}]\n",
			[]problem{{apiv1.CodeUnsupported, "spec.trainer.env[0].valueFrom"}},
		},
		"zero nodes": {
			"  runtimeRef: {name: torch-distributed}\n  trainer: {command: [x], numNodes: 0}\n",
			[]problem{{apiv1.CodeOutOfRange, "spec.trainer.numNodes"}},
		},
		"bad deadline": {
			"  runtimeRef: {name: torch-distributed}\n  activeDeadlineSeconds: 0\n  trainer: {command: [x]}\n",
			[]problem{{apiv1.CodeOutOfRange, "spec.activeDeadlineSeconds"}},
		},
		"a job no runtime has": {
			"  runtimeRef: {name: torch-distributed}\n  trainer: {command: [x]}\n  podTemplateOverrides:\n  - targetJobs: [{name: evaluator}]\n    spec: {nodeSelector: {a: b}}\n",
			[]problem{{apiv1.CodeUnsupported, "spec.podTemplateOverrides[0].targetJobs[0].name"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, errs := compileFiles(t, trainerHead+"spec:\n"+tc.spec)
			if got := problems(t, errs, "wf.yaml", "TrainJob/tj"); !cmp.Equal(got, tc.want) {
				t.Errorf("problems %v, want %v\n%v", got, tc.want, errs)
			}
		})
	}
}

// TestTrainerOverridesShapeTheTrainersPods checks v2.1's
// podTemplateOverrides and v2.2's runtimePatches reach the pod template.
func TestTrainerOverridesShapeTheTrainersPods(t *testing.T) {
	t.Parallel()
	for name, spec := range map[string]string{
		"podTemplateOverrides": "  podTemplateOverrides:\n  - targetJobs: [{name: node}]\n    metadata: {labels: {a: b}}\n    spec:\n      nodeSelector: {zone: x}\n      containers: [{name: node, volumeMounts: [{name: data, mountPath: /data}]}]\n      volumes: [{name: data, emptyDir: {}}]\n",
		"runtimePatches":       "  runtimePatches:\n  - manager: me\n    trainingRuntimeSpec:\n      template:\n        spec:\n          replicatedJobs:\n          - name: node\n            template:\n              spec:\n                template:\n                  metadata: {labels: {a: b}}\n                  spec:\n                    nodeSelector: {zone: x}\n                    containers: [{name: node, volumeMounts: [{name: data, mountPath: /data}]}]\n                    volumes: [{name: data, emptyDir: {}}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checked, errs := compileFiles(t, trainerHead+"spec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {command: [x]}\n"+spec)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			pt := checked[0].Plan.Workflow.Spec.Tasks[0].PodTemplate
			if pt == nil || pt.Metadata.Labels["a"] != "b" || pt.Spec.NodeSelector["zone"] != "x" || len(pt.Spec.Volumes) != 1 ||
				len(pt.Spec.Containers) != 1 || pt.Spec.Containers[0].Name != apiv1.MainContainer || len(pt.Spec.Containers[0].VolumeMounts) != 1 {
				t.Errorf("pod template %+v", pt)
			}
		})
	}
}

const trainerRuntime = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rt}
spec:
  mlPolicy:
    numNodes: 2
    mpi: {numProcPerNode: 4, mpiImplementation: OpenMPI, sshAuthMountPath: /home/mpiuser/.ssh}
  podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 30}}
  template:
    spec:
      failurePolicy: {maxRestarts: 2}
      replicatedJobs:
      - name: launcher
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: mpi
                  command: [mpirun, python3, train.py]
                  resources: {requests: {cpu: 250m}}
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: mpi, command: [/usr/sbin/sshd, -De]}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: rt}
`

// TestTrainerRuntimeGivesTheJobItsLauncherAndPolicies checks a Trainer
// runtime with an MPI launcher: the launcher's command is the job's.
func TestTrainerRuntimeGivesTheJobItsLauncherAndPolicies(t *testing.T) {
	t.Parallel()
	checked, errs := compileFiles(t, trainerRuntime)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	task := checked[0].Plan.Tasks[0]
	if task.Train.NumNodes != 2 || task.Train.NumProcPerNode != 4 || task.Train.PerNode.MilliCPU != 250 {
		t.Errorf("job %d nodes x %d, %dm per node", task.Train.NumNodes, task.Train.NumProcPerNode, task.Train.PerNode.MilliCPU)
	}
	if got := strings.Join(task.Train.Command, " "); got != "mpirun python3 train.py" {
		t.Errorf("command %q, want the launcher's", got)
	}
	if task.Retry.Limit != 2 {
		t.Errorf("retries %d, want the JobSet's failurePolicy.maxRestarts, 2", task.Retry.Limit)
	}
	if task.AdmissionTimeout.Seconds() != 30 {
		t.Errorf("admission timeout %v, want coscheduling's 30s", task.AdmissionTimeout)
	}
	var fields []string
	for _, i := range checked[0].Ignored {
		fields = append(fields, i.Field)
	}
	want := "TrainingRuntime/rt spec.mlPolicy.mpi.sshAuthMountPath"
	if !strings.Contains(strings.Join(fields, "\n"), want) {
		t.Errorf("ignored %v, want %s among them", fields, want)
	}
}

func TestTrainerRuntimeProblemsNameTheRuntimesFields(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		from, to string
		want     []problem
	}{
		"intel mpi":      {"mpiImplementation: OpenMPI", "mpiImplementation: Intel", []problem{{apiv1.CodeUnsupported, "spec.mlPolicy.mpi.mpiImplementation"}}},
		"two frameworks": {"    numNodes: 2\n", "    numNodes: 2\n    torch: {}\n", []problem{{apiv1.CodeNoMLPolicy, "spec.mlPolicy"}}},
		"replicas":       {"\n      - name: node\n", "\n      - name: node\n        replicas: 2\n", []problem{{apiv1.CodeUnsupported, "spec.template.spec.replicatedJobs[1].replicas"}}},
		"a new job":      {"\n      - name: node\n", "\n      - name: evaluator\n", []problem{{apiv1.CodeUnsupported, "spec.template.spec.replicatedJobs[1].name"}}},
		"bad cpu":        {"cpu: 250m", "cpu: lots", []problem{{apiv1.CodeQuantity, "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.requests.cpu"}}},
		"bad timeout":    {"scheduleTimeoutSeconds: 30", "scheduleTimeoutSeconds: -1", []problem{{apiv1.CodeOutOfRange, "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, errs := compileFiles(t, strings.Replace(trainerRuntime, tc.from, tc.to, 1))
			var got []problem
			for _, e := range errs {
				if e.Object == "TrainingRuntime/rt" {
					got = append(got, problem{e.Code, e.Field})
				}
			}
			if !cmp.Equal(got, tc.want) {
				t.Errorf("problems %v, want %v\n%v", got, tc.want, errs)
			}
		})
	}
}

// TestTrainerRuntimesPodLiesUnderTheJobsOverrides checks that the pod
// fields of a runtime's node reach the job's pods, with the job's own
// overrides merged over them (lists by name, as kubectl apply merges).
func TestTrainerRuntimesPodLiesUnderTheJobsOverrides(t *testing.T) {
	t.Parallel()
	checked, errs := compileFiles(t, `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rt}
spec:
  mlPolicy: {torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              metadata: {labels: {from: runtime}}
              spec:
                securityContext: {runAsUser: 1000}
                volumes: [{name: shm, emptyDir: {medium: Memory}}]
                containers:
                - name: node
                  image: torch
                  command: [torchrun, train.py]
                  volumeMounts: [{name: shm, mountPath: /dev/shm}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj}
spec:
  runtimeRef: {name: rt, kind: TrainingRuntime}
  podTemplateOverrides:
  - targetJobs: [{name: node}]
    metadata: {labels: {from: job}}
    spec:
      nodeSelector: {gpu: a100}
      volumes: [{name: data, emptyDir: {}}]
      containers: [{name: node, volumeMounts: [{name: data, mountPath: /data}]}]
`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	task := checked[0].Plan.Tasks[0]
	pt := task.PodTemplate
	if pt == nil || pt.Spec == nil {
		t.Fatalf("no pod template: %+v", pt)
	}
	if pt.Metadata.Labels["from"] != "job" || pt.Spec.NodeSelector["gpu"] != "a100" || pt.Spec.SecurityContext == nil || *pt.Spec.SecurityContext.RunAsUser != 1000 {
		t.Errorf("pod template %+v: want the job's label and node selector over the runtime's security context", pt)
	}
	var vols, mounts []string
	for _, v := range pt.Spec.Volumes {
		vols = append(vols, v.Name)
	}
	if len(pt.Spec.Containers) != 1 || pt.Spec.Containers[0].Name != apiv1.MainContainer {
		t.Fatalf("containers %+v, want kiln's main alone", pt.Spec.Containers)
	}
	for _, m := range pt.Spec.Containers[0].VolumeMounts {
		mounts = append(mounts, m.MountPath)
	}
	if len(vols) != 2 || len(mounts) != 2 {
		t.Errorf("volumes %v mounts %v, want the runtime's and the job's", vols, mounts)
	}
	if task.Image != "torch" || strings.Join(task.Train.Command, " ") != "torchrun train.py" {
		t.Errorf("image %q command %v, want the runtime's", task.Image, task.Train.Command)
	}
}

// TestTrainerClusterRuntimeIsAppliedAsOne checks kiln apply stores a
// Trainer ClusterTrainingRuntime as kiln's, and names its fields as
// written when it is wrong.
func TestTrainerClusterRuntimeIsAppliedAsOne(t *testing.T) {
	t.Parallel()
	text := strings.Replace(strings.Split(trainerRuntime, "---")[0], "kind: TrainingRuntime", "kind: ClusterTrainingRuntime", 1)
	docs := mustRead(t, text)
	out, err := CheckApply([]string{"wf.yaml"}, docs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Runtimes) != 1 || out.Runtimes[0].Kind != apiv1.KindClusterTrainingRuntime || out.Runtimes[0].Spec.MLPolicy.MPI == nil {
		t.Fatalf("applied %+v, want one MPI ClusterTrainingRuntime", out.Runtimes)
	}
	_, err = CheckApply([]string{"wf.yaml"}, mustRead(t, strings.Replace(text, "cpu: 250m", "cpu: lots", 1)), nil, nil)
	want := "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.requests.cpu"
	if errs := apiv1.Errors(err); len(errs) != 1 || errs[0].Field != want || errs[0].Object != "ClusterTrainingRuntime/rt" {
		t.Errorf("errors %v, want one at %s", errs, want)
	}
}

// TestTrainerInitializersRunBeforeTheTrainer checks Trainer's dataset and
// model initializers become kiln's initializer tasks, and an unknown
// scheme is refused naming Trainer's field.
func TestTrainerInitializersRunBeforeTheTrainer(t *testing.T) {
	t.Parallel()
	checked, errs := compileFiles(t, trainerHead+`spec:
  runtimeRef: {name: torch-distributed}
  initializer:
    dataset: {storageUri: "https://example.com/d.csv", secretRef: {name: hf}}
    model: {storageUri: /models/base}
  trainer: {command: [x]}
`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var names []string
	for _, task := range checked[0].Plan.Tasks {
		names = append(names, task.Spec.Name)
	}
	if want := []string{"trainer", "dataset-initializer", "model-initializer"}; !cmp.Equal(names, want) {
		t.Errorf("tasks %v, want %v", names, want)
	}
	if deps := strings.Join(checked[0].Plan.Workflow.Spec.Tasks[0].DependsOn, " "); !strings.Contains(deps, "dataset-initializer") || !strings.Contains(deps, "model-initializer") {
		t.Errorf("the trainer depends on %q, want both initializers", deps)
	}
	_, errs = compileFiles(t, trainerHead+"spec:\n  runtimeRef: {name: torch-distributed}\n  initializer: {model: {storageUri: 'hf://org/m'}}\n  trainer: {command: [x]}\n")
	if got := problems(t, errs, "wf.yaml", "TrainJob/tj"); !cmp.Equal(got, []problem{{apiv1.CodeStorageScheme, "spec.initializer.model.storageUri"}}) {
		t.Errorf("problems %v", got)
	}
}
