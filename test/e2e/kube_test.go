package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/testcluster"
)

// cluster is the test cluster and the test's namespace.
type cluster struct {
	kubeconfig, ns string
	cs             kubernetes.Interface
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := testcluster.Connect(t)
	return &cluster{kubeconfig: c.Kubeconfig, ns: c.Namespace, cs: c.Client}
}

// home is a kiln home configured for the cluster's namespace. Pods that
// no node takes fail after 30s, so a test never waits on them forever.
func (c *cluster) home(t *testing.T) string {
	t.Helper()
	home := newHome(t)
	writeFile(t, home, "config.yaml", fmt.Sprintf("backend: kubernetes\nkubernetes:\n  kubeconfig: %s\n  namespace: %s\n  unschedulableTimeout: 30s\n",
		c.kubeconfig, c.ns))
	return home
}

// pods lists the pods of a run.
func (c *cluster) pods(t *testing.T, run apiv1.RunID) []corev1.Pod {
	t.Helper()
	l, err := c.cs.CoreV1().Pods(c.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "kiln.dev/run=" + string(run)})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// leftovers counts every object kiln made for a run, of every kind.
func (c *cluster) leftovers(t *testing.T, run apiv1.RunID) map[string]int {
	t.Helper()
	ctx, sel := context.Background(), metav1.ListOptions{LabelSelector: "kiln.dev/run=" + string(run)}
	out := map[string]int{}
	pods, err := c.cs.CoreV1().Pods(c.ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := c.cs.CoreV1().Services(c.ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	cms, err := c.cs.CoreV1().ConfigMaps(c.ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range map[string]int{"pods": len(pods.Items), "services": len(svcs.Items), "configmaps": len(cms.Items)} {
		if n > 0 {
			out[k] = n
		}
	}
	return out
}

// runID finds the run ID in kiln run's summary line.
func runID(t *testing.T, out string) apiv1.RunID {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Run" {
			return apiv1.RunID(f[1])
		}
	}
	t.Fatalf("no run ID in %q", out)
	return ""
}

const threeTasks = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata:
  name: three
spec:
  image: busybox:1.36
  podTemplate:
    metadata:
      annotations:
        kwok.kiln.dev/exit-code: "0"
        kwok.kiln.dev/message: "answer 2\n42"
  tasks:
  - name: prepare
    command: [sh, -c, "echo 42 > $KILN_OUTPUTS/answer"]
    resources: {cpu: 500m, memory: 64Mi}
    outputs:
      parameters: [{name: answer}]
  - name: train
    dependsOn: [prepare]
    command: [echo, "{{tasks.prepare.outputs.parameters.answer}}"]
  - name: evaluate
    dependsOn: [train]
    image: python:3.12-slim
    podTemplate:
      metadata:
        annotations: {kwok.kiln.dev/exit-code: "0"}
      spec:
        nodeSelector: {type: kwok}
        tolerations: [{key: dedicated, operator: Exists}]
    command: [python, -c, "print('ok')"]
`

func TestKubeWorkflowOfThreeTasksSucceeds(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	r := kiln(t, home, "run", writeFile(t, t.TempDir(), "wf.yaml", threeTasks))
	if r.code != 0 {
		t.Fatalf("kiln run exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := runID(t, r.stdout)
	run := describe(t, home, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run is %s", run.Status.Phase)
	}
	pods := map[string]corev1.Pod{}
	for _, p := range c.pods(t, id) {
		pods[p.Labels["kiln.dev/node"]] = p
	}
	if len(pods) != 3 {
		t.Fatalf("want one pod per task, got %d", len(pods))
	}
	prep, train, eval := pods["prepare"], pods["train"], pods["evaluate"]
	if prep.Name != string(id)+"-prepare-1" || prep.Labels["kiln.dev/attempt"] != "1" || prep.Labels["kiln.dev/run"] != string(id) {
		t.Errorf("prepare's pod: name %s, labels %v", prep.Name, prep.Labels)
	}
	if got := prep.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "500m" {
		t.Errorf("prepare requests cpu %s, want 500m", got)
	}
	if got := prep.Spec.Containers[0].Resources.Limits.Memory().String(); got != "64Mi" {
		t.Errorf("prepare's memory limit %s, want 64Mi", got)
	}
	// The output parameter came back through the termination message.
	if cmd := train.Spec.Containers[0].Command; cmd[len(cmd)-1] != "42" {
		t.Errorf("train's command %q does not end in prepare's output 42", cmd)
	}
	if eval.Spec.Containers[0].Image != "python:3.12-slim" || eval.Spec.NodeSelector["type"] != "kwok" ||
		eval.Spec.Tolerations[0].Key != "dedicated" || train.Spec.Containers[0].Image != "busybox:1.36" {
		t.Errorf("images/podTemplate not applied: train %s, evaluate %s %v %v", train.Spec.Containers[0].Image,
			eval.Spec.Containers[0].Image, eval.Spec.NodeSelector, eval.Spec.Tolerations)
	}
	// Logs come from the pod log API (kwok serves two lines per container).
	if logs := kiln(t, home, "logs", string(id)); !strings.Contains(logs.stdout, "[train] kwok: line 2 of a container log") {
		t.Errorf("kiln logs: %d\n%s%s", logs.code, logs.stdout, logs.stderr)
	}
	if logs := kiln(t, home, "logs", string(id), "evaluate", "-f"); logs.stdout != "kwok: line 1 of a container log\nkwok: line 2 of a container log\n" {
		t.Errorf("kiln logs -f of a finished task: %d\n%q%s", logs.code, logs.stdout, logs.stderr)
	}
	for _, p := range pods {
		for _, e := range p.Spec.Containers[0].Env {
			if e.Name == "PATH" || e.Name == "HOME" {
				t.Errorf("pod %s inherits kiln's own environment (%s)", p.Name, e.Name)
			}
		}
	}
}

func TestKubeTaskWithoutImageIsRejected(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	wf := writeFile(t, t.TempDir(), "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: noimage}
spec:
  tasks:
  - {name: a, command: [echo, hi]}
`)
	r := kiln(t, home, "run", wf)
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-1019") || !strings.Contains(r.stderr, "spec.tasks[0].image") ||
		!strings.Contains(r.stderr, wf) {
		t.Fatalf("want KLN-1019 naming the file and spec.tasks[0].image, got %d:\n%s", r.code, r.stderr)
	}
	if n := len(runs(t, home)); n != 0 {
		t.Errorf("a rejected workflow left %d runs", n)
	}
}

func waitPods(t *testing.T, c *cluster, id apiv1.RunID, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d pods running", n), func() bool {
		count := 0
		for _, p := range c.pods(t, id) {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				count++
			}
		}
		return count == n
	})
}

// newestRun is the ID of the one run in home, once it exists.
func newestRun(t *testing.T, home string) apiv1.RunID {
	t.Helper()
	var id apiv1.RunID
	waitFor(t, "the run to be created", func() bool {
		rs := runs(t, home)
		if len(rs) > 0 {
			id = rs[0].ID
		}
		return id != ""
	})
	return id
}

// waitCancelled waits until run id is Cancelled.
func waitCancelled(t *testing.T, home string, id apiv1.RunID) {
	t.Helper()
	waitFor(t, "run Cancelled", func() bool {
		return describe(t, home, id).Status.Phase == apiv1.PhaseCancelled
	})
}

func TestValidateForKubernetesRequiresImages(t *testing.T) {
	home := t.TempDir()
	local := filepath.Join(repoRoot(), "examples", "pipeline.yaml")
	r := kiln(t, home, "validate", "--backend", "kubernetes", local, filepath.Join(repoRoot(), "examples", "kubernetes", "pipeline.yaml"))
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-1019 "+local+":21:5: Workflow/linear-fit: spec.tasks[0].image") ||
		!strings.Contains(r.stdout, "ok: ") {
		t.Fatalf("validate --backend kubernetes: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "validate", local); r.code != 0 {
		t.Errorf("the local backend needs no image: %s", r.stderr)
	}
	writeFile(t, home, "config.yaml", "backend: kubernetes\nkubernetes: {cleanPolicy: Sometimes}\n")
	if r := kiln(t, home, "validate", local); r.code == 0 || !strings.Contains(r.stderr, "kubernetes.cleanPolicy") {
		t.Errorf("a bad configuration file must be named: %d %s", r.code, r.stderr)
	}
}

// TestKubeCacheReusesOutputParameters runs a cached pipeline twice on the
// cluster: the second run starts no pod for the cached tasks, whose
// output parameters came back through the termination message the first
// time. A task that writes artifacts is not cached there, and says why.
func TestKubeCacheReusesOutputParameters(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	wf := strings.Replace(threeTasks, "    resources: {cpu: 500m, memory: 64Mi}\n", "    resources: {cpu: 500m, memory: 64Mi}\n    cache: {version: \"1\"}\n", 1)
	wf = strings.Replace(wf, "    command: [echo, \"{{tasks.prepare.outputs.parameters.answer}}\"]\n",
		"    command: [echo, \"{{tasks.prepare.outputs.parameters.answer}}\"]\n    cache: {}\n    outputs:\n      artifacts: [{name: model, path: model.bin}]\n", 1)
	file := writeFile(t, t.TempDir(), "wf.yaml", wf)
	var ids []apiv1.RunID
	for range 2 {
		r := kiln(t, home, "run", file)
		if r.code != 0 {
			t.Fatalf("kiln run exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		ids = append(ids, runID(t, r.stdout))
	}
	second := describe(t, home, ids[1])
	prep := nodeNamed(t, second, "prepare")
	if prep.Cache == nil || prep.Cache.Result != apiv1.CacheHit || prep.Cache.SourceRun != ids[0] || prep.Outputs["answer"] != "42" {
		t.Errorf("prepare on the second run: cache %+v, outputs %v; want a Hit from %s with answer 42", prep.Cache, prep.Outputs, ids[0])
	}
	if tr := nodeNamed(t, second, "train"); tr.Cache == nil || tr.Cache.Result != apiv1.CacheUnavailable || !strings.Contains(tr.Cache.Message, "artifacts") {
		t.Errorf("train writes an artifact: cache %+v, want Unavailable saying why", tr.Cache)
	}
	nodes := map[string]bool{}
	for _, p := range c.pods(t, ids[1]) {
		nodes[p.Labels["kiln.dev/node"]] = true
	}
	if nodes["prepare"] || !nodes["train"] {
		t.Errorf("the second run made pods for %v; want none for the cached prepare, one for train", nodes)
	}
}
