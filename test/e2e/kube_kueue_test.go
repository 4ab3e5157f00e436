package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

var (
	kueueGroup   = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta1"}
	workloadsGVR = kueueGroup.WithResource("workloads")
)

// kueueUp skips the test unless Kueue runs beside the test cluster (the
// controller k8s-up starts, its pid file next to the kubeconfig); with
// KILN_REQUIRE_K8S=1 its absence is a failure.
func kueueUp(t *testing.T, c *cluster) dynamic.Interface {
	t.Helper()
	pid, err := os.ReadFile(filepath.Join(filepath.Dir(c.kubeconfig), "kueue.pid"))
	if err == nil {
		var n int
		if n, err = strconv.Atoi(strings.TrimSpace(string(pid))); err == nil {
			err = syscall.Kill(n, 0)
		}
	}
	if err != nil {
		if os.Getenv("KILN_REQUIRE_K8S") == "1" {
			t.Fatalf("Kueue is required (KILN_REQUIRE_K8S=1) but does not run beside the test cluster (make k8s-up starts it): %v", err)
		}
		t.Skipf("Kueue does not run beside the test cluster (make k8s-up): %v", err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// kueueQueue makes a ResourceFlavor of the kwok nodes, a ClusterQueue of
// quota cpu for the test's namespace only, and LocalQueue "training"
// there; the cluster-wide ones are deleted when the test ends.
func kueueQueue(t *testing.T, c *cluster, dyn dynamic.Interface, cpu string) {
	t.Helper()
	name := "kiln-" + c.ns
	create := func(res, ns, doc string) {
		t.Helper()
		var u unstructured.Unstructured
		if err := json.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(kueueGroup.WithResource(res))
		if ns != "" {
			ri = dyn.Resource(kueueGroup.WithResource(res)).Namespace(ns)
		} else {
			t.Cleanup(func() { _ = ri.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
		}
		if _, err := ri.Create(t.Context(), &u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s: %v", res, err)
		}
	}
	create("resourceflavors", "", fmt.Sprintf(`{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
		"metadata": {"name": %q}, "spec": {"nodeLabels": {"type": "kwok"}}}`, name))
	create("clusterqueues", "", fmt.Sprintf(`{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
		"metadata": {"name": %q},
		"spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": %q}},
		         "resourceGroups": [{"coveredResources": ["cpu", "memory"],
		                             "flavors": [{"name": %q, "resources": [{"name": "cpu", "nominalQuota": %q},
		                                                                    {"name": "memory", "nominalQuota": "4Gi"}]}]}]}}`,
		name, c.ns, name, cpu))
	create("localqueues", c.ns, fmt.Sprintf(`{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
		"metadata": {"name": "training", "namespace": %q}, "spec": {"clusterQueue": %q}}`, c.ns, name))
}

// queuedTrainJob is a kiln TrainJob of 2 nodes of 1 CPU that Kueue's
// LocalQueue "training" admits; its pods run until the test ends them.
const queuedTrainJob = `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata:
  name: first
  labels: {kueue.x-k8s.io/queue-name: training}
spec:
  runtimeRef: {name: plain}
  trainer:
    image: busybox:1.36
    numNodes: 2
    command: [sh, -c, "echo admitted"]
    resourcesPerNode: {cpu: "1", memory: 16Mi}
`

// queuedWorkflow's train node asks for 2 nodes of 1 CPU through the same
// queue, from its pod template's labels; its pods end at once.
const queuedWorkflow = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: second}
spec:
  tasks:
  - name: fit
    podTemplate:
      metadata:
        labels: {kueue.x-k8s.io/queue-name: training}
    train: {runtime: plain, numNodes: 2, image: busybox:1.36, command: [sh, -c, "echo fit"], resourcesPerNode: {cpu: "1", memory: 16Mi}}
`

// TestKubeKueueAdmitsTrainJobThenWorkflowNode: a ClusterQueue of 2 CPUs
// admits a kiln TrainJob of 2 nodes of 1 CPU; a workflow's train node of
// the same size then waits in Kueue, shown as its node's queue reason in
// Kueue's words, with no pod created, across a restart of kiln (which
// adopts its Workload rather than making a second); once the first job
// ends Kueue admits the second, whose pods land on the flavor's nodes.
func TestKubeKueueAdmitsTrainJobThenWorkflowNode(t *testing.T) {
	c := newCluster(t)
	dyn := kueueUp(t, c)
	kueueQueue(t, c, dyn, "2")
	home := c.home(t)
	base, admin, serve := startServe(t, home)

	first := postRun(t, base, admin, queuedTrainJob)
	waitFor(t, "Kueue to admit the TrainJob and its pods to run", func() bool {
		pods := c.pods(t, first.ID)
		return len(pods) == 2 && pods[0].Status.Phase == corev1.PodRunning && pods[1].Status.Phase == corev1.PodRunning
	})
	for _, p := range c.pods(t, first.ID) {
		if p.Spec.NodeSelector["type"] != "kwok" || p.Labels[apiv1.LabelKueueQueue] != "" {
			t.Errorf("pod %s: node selector %v, labels %v; want the flavor's type=kwok and no queue label", p.Name, p.Spec.NodeSelector, p.Labels)
		}
	}
	wl := workloadOf(t, c, dyn, first.ID)
	if q, _, _ := unstructured.NestedString(wl.Object, "spec", "queueName"); q != "training" {
		t.Errorf("the TrainJob's workload is in queue %q, want training", q)
	}

	second := postRun(t, base, admin, queuedWorkflow)
	var fit apiv1.NodeStatus
	waitFor(t, "the workflow's train node to wait for Kueue", func() bool {
		run := describe(t, home, second.ID)
		fit = trainNode(t, &run)
		return strings.Contains(fit.Message, "WaitingForKueue") && strings.Contains(fit.Message, "insufficient")
	})
	t.Logf("the waiting node: %s", fit.Message)
	cond := map[string]apiv1.Condition{}
	for _, k := range fit.Conditions {
		cond[k.Type] = k
	}
	if q := cond[apiv1.ConditionQueued]; q.Status != "True" || q.Reason != "WaitingForKueue" || !strings.Contains(q.Message, "insufficient") {
		t.Errorf("Queued condition %+v, want True, WaitingForKueue, with Kueue's message on quota", q)
	}
	if pods := c.pods(t, second.ID); len(pods) != 0 {
		t.Errorf("%d pods of the waiting node, want none before Kueue admits it", len(pods))
	}
	if d := kiln(t, home, "describe", "run", string(second.ID)); !strings.Contains(d.stdout, "WaitingForKueue") {
		t.Errorf("kiln describe run shows no Kueue reason:\n%s%s", d.stdout, d.stderr)
	}

	// A new server adopts the waiting attempt and its Workload.
	uid := workloadOf(t, c, dyn, second.ID).GetUID()
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = serve.Wait()
	_, _, _ = startServe(t, home)

	endPods(t, c, first.ID)
	waitFor(t, "the TrainJob to succeed", func() bool { return describe(t, home, first.ID).Status.Phase == apiv1.PhaseSucceeded })
	waitFor(t, "Kueue to admit the workflow's train node and its pods to run", func() bool {
		pods := c.pods(t, second.ID)
		return len(pods) == 2 && pods[0].Status.Phase == corev1.PodRunning && pods[1].Status.Phase == corev1.PodRunning
	})
	if got := workloadOf(t, c, dyn, second.ID).GetUID(); got != uid {
		t.Errorf("the admitted workload is %s, want the one made before the restart, %s", got, uid)
	}
	for _, p := range c.pods(t, second.ID) {
		if p.Spec.NodeSelector["type"] != "kwok" {
			t.Errorf("pod %s: node selector %v, want the flavor's type=kwok", p.Name, p.Spec.NodeSelector)
		}
	}
	endPods(t, c, second.ID)
	waitFor(t, "the workflow to succeed", func() bool { return describe(t, home, second.ID).Status.Phase == apiv1.PhaseSucceeded })
	run := describe(t, home, second.ID)
	if fit = trainNode(t, &run); len(fit.Attempts) != 1 {
		t.Errorf("the train node made %d attempts, want 1 adopted across the restart", len(fit.Attempts))
	}
	waitFor(t, "the ended attempts' workloads to be deleted", func() bool {
		l, err := dyn.Resource(workloadsGVR).Namespace(c.ns).List(t.Context(), metav1.ListOptions{})
		return err == nil && len(l.Items) == 0
	})
}

// endPods has kwok end every container of run's pods with exit code 0.
func endPods(t *testing.T, c *cluster, run apiv1.RunID) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"kwok.kiln.dev/exit-code":"0"}}}`)
	for _, p := range c.pods(t, run) {
		if _, err := c.cs.CoreV1().Pods(c.ns).Patch(t.Context(), p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// workloadOf is the one Workload of run, waiting for it to exist.
func workloadOf(t *testing.T, c *cluster, dyn dynamic.Interface, run apiv1.RunID) *unstructured.Unstructured {
	t.Helper()
	var items []unstructured.Unstructured
	waitFor(t, "the run's workload", func() bool {
		l, err := dyn.Resource(workloadsGVR).Namespace(c.ns).List(t.Context(), metav1.ListOptions{LabelSelector: "kiln.dev/run=" + string(run)})
		if err != nil {
			t.Fatal(err)
		}
		items = l.Items
		return len(items) > 0
	})
	if len(items) != 1 {
		t.Fatalf("run %s has %d workloads, want 1", run, len(items))
	}
	return &items[0]
}
