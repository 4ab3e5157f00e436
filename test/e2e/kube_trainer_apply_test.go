package e2e

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// kubeRuntimeAndJob is a ClusterTrainingRuntime and its TrainJob in one
// file, for the test cluster: the fake kubelet ends each pod with the
// annotation's exit code.
const kubeRuntimeAndJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: RUNTIME}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              metadata:
                annotations: {kwok.kiln.dev/exit-code: "0"}
              spec:
                containers: [{name: node, IMAGE}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: kube-apply}
spec:
  runtimeRef: {kind: ClusterTrainingRuntime, name: RUNTIME}
  trainer:
    numNodes: 2
    command: [python3, train.py]
    resourcesPerNode: {requests: {cpu: 100m, memory: 64Mi}}
`

// TestKubeApplyStoresTheRuntimeThenRunsTheJob applies a runtime and its
// job from one file on the Kubernetes backend: the job's pods run with the
// runtime's image. A job with no image anywhere is refused before the
// runtime is stored.
func TestKubeApplyStoresTheRuntimeThenRunsTheJob(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "both.yaml", strings.NewReplacer("RUNTIME", "kube-apply-rt", "IMAGE", "image: busybox:1.36").Replace(kubeRuntimeAndJob))
	r := kiln(t, home, "apply", "-q", "-f", file)
	if r.code != 0 || !strings.Contains(r.stdout, "ClusterTrainingRuntime/kube-apply-rt created") || !strings.Contains(r.stdout, "TrainJob/kube-apply submitted in project default") {
		t.Fatalf("kiln apply on the cluster: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := runs(t, home)[0].ID
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run %s is %s, want Succeeded", id, run.Status.Phase)
	}

	noImage := writeFile(t, dir, "noimage.yaml", strings.NewReplacer("RUNTIME", "kube-apply-noimage", "IMAGE", "command: [x]").Replace(kubeRuntimeAndJob))
	r = kiln(t, home, "apply", "-f", noImage)
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-1019") {
		t.Errorf("kiln apply of a job without an image on the cluster: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if g := kiln(t, home, "get", "runtimes"); strings.Contains(g.stdout, "kube-apply-noimage") {
		t.Errorf("the runtime of a refused apply was stored:\n%s", g.stdout)
	}
	if n := len(runs(t, home)); n != 1 {
		t.Errorf("%d runs, want the first alone", n)
	}
}

// kueueTrainerJob is Trainer's examples/yaml/03-kueue-integration.yaml
// shape: the queue label on the TrainJob and spec.suspend: true, which
// Kueue lifts when it admits the job.
const kueueTrainerJob = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: kueue-example
  labels: {kueue.x-k8s.io/queue-name: training}
spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-distributed}
  suspend: true
  trainer:
    numNodes: 2
    image: python:3.11-slim
    command: [python3, -c, "print('Training started via Kueue')"]
    resourcesPerNode: {requests: {cpu: "1", memory: 16Mi}}
`

// TestKubeTrainerJobSuspendedForKueueRunsOnceAdmitted: with the queue
// label, a Trainer TrainJob's suspend is Kueue's. kiln does not hold the
// run for kiln resume: Kueue admits its Workload and its pods run.
func TestKubeTrainerJobSuspendedForKueueRunsOnceAdmitted(t *testing.T) {
	c := newCluster(t)
	dyn := kueueUp(t, c)
	kueueQueue(t, c, dyn, "2")
	home := c.home(t)
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "kueue.yaml", kueueTrainerJob))
	id := newestRun(t, home)
	if q, _, _ := unstructured.NestedString(workloadOf(t, c, dyn, id).Object, "spec", "queueName"); q != "training" {
		t.Errorf("the TrainJob's workload is in queue %q, want training", q)
	}
	waitPods(t, c, id, 2)
	if run := describe(t, home, id); run.Suspend {
		t.Errorf("run %s is suspended for kiln resume; Kueue's suspend is not kiln's", id)
	}
	endPods(t, c, id)
	if err := cmd.Wait(); err != nil {
		t.Errorf("kiln run of the Kueue TrainJob: %v", err)
	}
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run %s is %s, want Succeeded", id, run.Status.Phase)
	}
}
