package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/testcluster"
)

// kueueRuns skips the test unless Kueue's controller runs beside the test
// cluster (its pid file next to the kubeconfig, as k8s-up writes it);
// with KILN_REQUIRE_K8S=1 its absence fails the test.
func kueueRuns(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	pid, err := os.ReadFile(filepath.Join(filepath.Dir(c.Kubeconfig), "kueue.pid"))
	if err == nil {
		var n int
		if n, err = strconv.Atoi(strings.TrimSpace(string(pid))); err == nil {
			err = syscall.Kill(n, 0)
		}
	}
	if err != nil {
		if os.Getenv("KILN_REQUIRE_K8S") == "1" {
			t.Fatalf("Kueue is required (KILN_REQUIRE_K8S=1) but does not run beside the test cluster: %v", err)
		}
		t.Skipf("Kueue does not run beside the test cluster (make k8s-up): %v", err)
	}
}

// kueueFixture makes a flavor, a ClusterQueue of 1 CPU for the test's
// namespace and its LocalQueue "q"; the cluster-wide ones go at the end.
func kueueFixture(t *testing.T, c *testcluster.Cluster, dyn dynamic.Interface) {
	t.Helper()
	name := "kiln-" + c.Namespace
	for _, o := range []struct{ res, ns, doc string }{
		{"resourceflavors", "", `{"kind": "ResourceFlavor", "metadata": {"name": "` + name + `"}, "spec": {"nodeLabels": {"type": "kwok"}}}`},
		{"clusterqueues", "", `{"kind": "ClusterQueue", "metadata": {"name": "` + name + `"}, "spec": {
			"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "` + c.Namespace + `"}},
			"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "` + name + `", "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}]}}`},
		{"localqueues", c.Namespace, `{"kind": "LocalQueue", "metadata": {"name": "q"}, "spec": {"clusterQueue": "` + name + `"}}`},
	} {
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(o.doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		u.SetAPIVersion("kueue.x-k8s.io/v1beta1")
		ri := dyn.Resource(workloadGVR.GroupVersion().WithResource(o.res))
		var err error
		if o.ns == "" {
			_, err = ri.Create(t.Context(), u, metav1.CreateOptions{})
			t.Cleanup(func() { _ = ri.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
		} else {
			_, err = ri.Namespace(o.ns).Create(t.Context(), u, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("creating %s: %v", o.res, err)
		}
	}
}

// TestKueueWorkloadEvictedThenFinished: of two 1-CPU tasks in a queue of
// 1 CPU, the first is admitted and runs, the second waits with Kueue's
// reason and no pod. Kueue evicting the first (deactivated) fails it as
// the system's fault with KLN-6023 and removes its pod; once it is
// released the second is admitted, runs, ends, and its Workload is
// marked Finished, then deleted on release. The backend's requests to
// Kueue's Workloads are exactly KueuePermissions' namespaced rules.
func TestKueueWorkloadEvictedThenFinished(t *testing.T) {
	c := testcluster.Connect(t)
	kueueRuns(t, c)
	used := &usedVerbs{}
	cfg := withDefaults(Config{Kubeconfig: c.Kubeconfig, Namespace: c.Namespace, Resync: time.Hour})
	rc, ns, err := RESTConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := dynamic.NewForConfig(rc) // the test's own requests, not recorded
	if err != nil {
		t.Fatal(err)
	}
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return used.recorder(rt) })
	core, err := newCoreClient(rc, ns)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	kueueFixture(t, c, fixtures)
	b, err := start(t.Context(), cfg, ns, core, dyn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	task := func(node string, annos map[string]string) *job.Spec {
		s := withAnnotations(&job.Spec{ID: job.AttemptID{Run: "r-kueue", Node: node, Number: 1}, Processes: []job.Process{{Command: []string{"x"}}}}, annos)
		s.Container.Queue, s.Container.MilliCPU = "q", 1000
		return s
	}
	first, second := task("first", nil), task("second", map[string]string{"kwok.kiln.dev/exit-code": "0"})
	observe := func(s *job.Spec) job.Status {
		st, err := b.Observe(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if err := b.Launch(ctx, first); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first task to be admitted and run", func() bool {
		st := observe(first)
		return st.State == job.StateRunning && st.Queue == nil && len(b.podsOf(names(first.ID))) == 1
	})
	if err := b.Launch(ctx, second); err != nil {
		t.Fatal(err)
	}
	var st job.Status
	eventually(t, "the second task to wait for Kueue's quota", func() bool {
		st = observe(second)
		return st.Queue != nil && strings.Contains(st.Queue.Message, "insufficient")
	})
	if st.State != job.StateRunning || st.Queue.Reason != ReasonKueue || len(b.podsOf(names(second.ID))) != 0 {
		t.Fatalf("the waiting task: %+v, %d pods; want running, queued for Kueue, no pod", st, len(b.podsOf(names(second.ID))))
	}

	deactivate := []byte(`{"spec":{"active":false}}`)
	if _, err := fixtures.Resource(workloadGVR).Namespace(ns).Patch(ctx, names(first.ID).Base, types.MergePatchType, deactivate, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the evicted task to fail", func() bool { return observe(first).State == job.StateExited })
	if st := observe(first); st.Code != string(apiv1.CodeKueueEvicted) || !st.System || !strings.Contains(st.Message, "Kueue evicted") {
		t.Errorf("the evicted task: %+v, want a system failure with %s", st, apiv1.CodeKueueEvicted)
	}
	eventually(t, "the evicted task's pod to go", func() bool { return len(b.podsOf(names(first.ID))) == 0 })
	if err := b.Release(ctx, first.ID, false); err != nil {
		t.Fatal(err)
	}

	eventually(t, "the second task to be admitted and end", func() bool { return observe(second).State == job.StateExited })
	if st := observe(second); st.ExitCode != 0 || st.Code != "" {
		t.Errorf("the second task: %+v, want success", st)
	}
	wl, err := fixtures.Resource(workloadGVR).Namespace(ns).Get(ctx, names(second.ID).Base, metav1.GetOptions{})
	if err != nil || !isTrue(wl, condFinished) {
		t.Fatalf("the ended task's workload: %v, Finished %v; want it Finished", err, wl != nil && isTrue(wl, condFinished))
	}
	if err := b.Release(ctx, second.ID, true); err != nil {
		t.Fatal(err)
	}
	l, err := fixtures.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Errorf("workloads left after release: %v %v", l, err)
	}

	got := map[string][]string{}
	for k, v := range used.grants() {
		if strings.HasPrefix(k, "kueue.x-k8s.io/") {
			got[k] = v
		}
	}
	namespaced, _ := KueuePermissions()
	if diff := cmp.Diff(Grants(namespaced), got); diff != "" {
		t.Errorf("the backend used (+) other than KueuePermissions (-):\n%s", diff)
	}
}
