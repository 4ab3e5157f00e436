package e2e

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const kubeElasticJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-elastic}
spec:
  mlPolicy:
    torch:
      numProcPerNode: 1
      elasticPolicy: {minNodes: 2, maxNodes: 3}
---
apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: elastic}
spec:
  runtimeRef: {name: torch-elastic}
  trainer:
    image: ghcr.io/example/elastic:1.0
    command: [torchrun, /app/train.py]
    resourcesPerNode: {cpu: 100m}
`

// TestKubeElasticJobOutlivesALostPodAndGrowsBack runs an elastic job on
// the cluster: its pods meet on node 0's pod through the c10d
// rendezvous; one fails, the job runs on and a fourth pod takes its place
// in the room it gave back; the job succeeds when the others do.
func TestKubeElasticJobOutlivesALostPodAndGrowsBack(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	home := c.home(t)
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "elastic.yaml", kubeElasticJob))
	id := newestRun(t, home)
	waitPods(t, c, id, 3)
	byNode := func() map[string]corev1.Pod {
		out := map[string]corev1.Pod{}
		for _, p := range c.pods(t, id) {
			out[p.Spec.Hostname] = p
		}
		return out
	}
	pods := byNode()
	node0 := ""
	for _, p := range pods {
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		if env["PET_RDZV_CONF"] == "is_host=true" {
			node0 = p.Spec.Hostname
		}
		if env["PET_RDZV_BACKEND"] != "c10d" || env["PET_NNODES"] != "2:3" || env["PET_MAX_RESTARTS"] != "3" ||
			!strings.Contains(env["PET_RDZV_ENDPOINT"], ":") || env["PET_RDZV_ID"] == "" {
			t.Errorf("pod %s env = %v, want the c10d rendezvous of 2:3 nodes", p.Name, env)
		}
	}
	if node0 == "" || !strings.HasPrefix(envOfPod(pods[node0])["PET_RDZV_ENDPOINT"], node0+".") {
		t.Errorf("node 0 (%q) does not host the rendezvous its peers meet on", node0)
	}
	var lost string
	for host, p := range pods {
		if host != node0 {
			lost = p.Name
			break
		}
	}
	c.setPod(t, lost, func(p *corev1.Pod) { endAs(p, corev1.PodFailed, 137) })
	waitFor(t, "a fourth pod to take the lost one's place", func() bool { return len(c.pods(t, id)) == 4 })
	waitPods(t, c, id, 3)
	for _, p := range c.pods(t, id) {
		if p.Status.Phase == corev1.PodRunning {
			c.setPod(t, p.Name, func(p *corev1.Pod) { endAs(p, corev1.PodSucceeded, 0) })
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kiln run: %v", err)
	}
	run := describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run is %s: %s", run.Status.Phase, run.Status.Message)
	}
	a := run.Status.Nodes[0].Attempts[0]
	if a.Nodes != 3 || a.Joined != 1 || len(a.Dropped) != 1 || !slices.Contains([]string{"node-1", "node-2"}, a.Dropped[0]) {
		t.Errorf("attempt: %d nodes, %d joined, dropped %v; want 3, 1 and the lost pod's node", a.Nodes, a.Joined, a.Dropped)
	}
}

func envOfPod(p corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, e := range p.Spec.Containers[0].Env {
		out[e.Name] = e.Value
	}
	return out
}

// endAs ends p's container as a kubelet would report it.
func endAs(p *corev1.Pod, phase corev1.PodPhase, code int32) {
	p.Status.Phase = phase
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: "Completed", FinishedAt: metav1.Now(),
	}}
}
