package e2e

import (
	"strings"
	"testing"

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
