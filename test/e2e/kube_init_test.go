package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestKubeTrainJobInitializersShareTheWorkspace runs a TrainJob whose
// dataset initializer is a pod of its own that runs kiln initialize, and
// whose trainer pods find its result at /workspace/dataset on the pod
// template's initializer volume. cleanPodPolicy None keeps every pod;
// All deletes the trainer's pods once it ended (the initializer's stays).
func TestKubeTrainJobInitializersShareTheWorkspace(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	id := runFetched(t, home, "None")
	pods := c.pods(t, id)
	if len(pods) != 3 {
		t.Fatalf("cleanPodPolicy None left %d pods, want the initializer's and both trainer's", len(pods))
	}
	for _, p := range pods {
		ct := p.Spec.Containers[0]
		mounted := slices.ContainsFunc(ct.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "initializer" && m.MountPath == "/workspace" })
		if p.Labels["kiln.dev/node"] == "trainer" && (!mounted ||
			!slices.ContainsFunc(ct.Env, func(e corev1.EnvVar) bool { return e.Name == "KILN_DATASET_DIR" && e.Value == "/workspace/dataset" })) {
			t.Errorf("trainer pod %s: mounts %+v, env %+v; want the initializer volume at /workspace and KILN_DATASET_DIR=/workspace/dataset", p.Name, ct.VolumeMounts, ct.Env)
		}
	}
	checkInitializerPod(t, c, runFetched(t, home, "All"))
}

// runFetched runs the job with cleanPodPolicy clean and returns its run.
func runFetched(t *testing.T, home, clean string) apiv1.RunID {
	t.Helper()
	job := writeFile(t, t.TempDir(), "job.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: fetched}
spec:
  runtimeRef: {name: torch-distributed}
  initializer:
    dataset: {storageUri: "https://example.com/rows.csv", image: "ghcr.io/example/kiln:1"}
  runPolicy: {cleanPodPolicy: `+clean+`}
  trainer:
    image: ghcr.io/example/ddp:1.0
    numNodes: 2
    numProcPerNode: 1
    command: [python3, /app/train.py]
  podTemplate:
    metadata:
      annotations: {kwok.kiln.dev/exit-code: "0", kwok.kiln.dev/delay: 1s}
    spec:
      volumes: [{name: initializer, emptyDir: {}}]
`)
	r := kiln(t, home, "run", "-q", job)
	if r.code != 0 {
		t.Fatalf("kiln run: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	id := runID(t, r.stdout+r.stderr)
	run := describe(t, home, id)
	if n := nodeNamed(t, run, "dataset-initializer"); n.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 1 {
		t.Fatalf("dataset-initializer %s with %d attempts, want one that succeeded", n.Phase, len(n.Attempts))
	}
	return id
}

// checkInitializerPod waits until the initializer's pod alone is left
// and checks what it runs and mounts.
func checkInitializerPod(t *testing.T, c *cluster, id apiv1.RunID) {
	t.Helper()
	var init []corev1.Pod
	waitFor(t, "the trainer's pods to be deleted (cleanPodPolicy All)", func() bool {
		init = nil
		for _, p := range c.pods(t, id) {
			if p.Labels["kiln.dev/node"] != "dataset-initializer" {
				return false
			}
			init = append(init, p)
		}
		return len(init) == 1
	})
	p := init[0]
	if ct := p.Spec.Containers[0]; ct.Image != "ghcr.io/example/kiln:1" || !strings.Contains(strings.Join(ct.Command, " "), "kiln initialize dataset https://example.com/rows.csv") ||
		!slices.ContainsFunc(ct.Env, func(e corev1.EnvVar) bool { return e.Name == "KILN_INITIALIZER_DIR" && e.Value == "/workspace/dataset" }) ||
		!slices.ContainsFunc(ct.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "initializer" && m.MountPath == "/workspace" }) {
		t.Errorf("the initializer's container is %+v; want kiln initialize in its image, writing /workspace/dataset on the initializer volume", ct)
	}
	claims, err := c.cs.CoreV1().PersistentVolumeClaims(c.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(claims.Items) != 0 {
		t.Errorf("kiln made %d claims (%v) though the pod template has its own initializer volume", len(claims.Items), err)
	}
}
