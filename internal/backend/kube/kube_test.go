package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/testcluster"
)

// harness is a backend on the test cluster, watching, with its reports.
type harness struct {
	*Backend
	c       *testcluster.Cluster
	reports chan report
}

type report struct {
	id job.AttemptID
	st job.Status
}

func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	c := testcluster.Connect(t)
	cfg.Kubeconfig, cfg.Namespace = c.Kubeconfig, c.Namespace
	ctx, cancel := context.WithCancel(context.Background())
	b, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{Backend: b, c: c, reports: make(chan report, 16)}
	done := make(chan struct{})
	go func() {
		b.Watch(ctx, func(id job.AttemptID, st job.Status) {
			select {
			case h.reports <- report{id, st}:
			case <-ctx.Done():
			}
		}, func() {})
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done; b.Close() })
	return h
}

// wait returns the next report of an attempt that ended or lost a host;
// reports of a running gang's placement (queued, placed) are passed over.
func (h *harness) wait(t *testing.T, id job.AttemptID) job.Status {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case r := <-h.reports:
			if r.st.State == job.StateRunning && len(r.st.Dropped) == 0 {
				continue
			}
			if r.id != id {
				t.Fatalf("report for %s, want %s", r.id, id)
			}
			return r.st
		case <-deadline:
			t.Fatalf("no report for %s", id)
		}
	}
}

func (h *harness) pods(t *testing.T, id job.AttemptID) []corev1.Pod {
	t.Helper()
	l, err := h.c.Client.CoreV1().Pods(h.ns).List(context.Background(),
		metav1.ListOptions{LabelSelector: LabelJob + "=" + names(id).Base})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// eventually polls cond until it holds, failing the test after 30s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventuallyWithin(t, 30*time.Second, what, cond)
}

// eventuallyWithin is eventually with a deadline of its own.
func eventuallyWithin(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

func withAnnotations(spec *job.Spec, annotations map[string]string) *job.Spec {
	b, _ := json.Marshal(apiv1.PodTemplate{Metadata: apiv1.PodMetadata{Annotations: annotations}})
	spec.Container.PodTemplate = b
	spec.Container.Image = "busybox:1.36"
	return spec
}

func TestClusterFailuresAreCoded(t *testing.T) {
	h := newHarness(t, Config{Stuck: time.Second})
	ctx := context.Background()
	cases := []struct {
		name  string
		annos map[string]string
		code  apiv1.Code
		want  string
	}{
		{"oom", map[string]string{"kwok.kiln.dev/exit-code": "137", "kwok.kiln.dev/reason": "OOMKilled"}, apiv1.CodeOOMKilled, "OOMKilled"},
		{"pull", map[string]string{
			"kwok.kiln.dev/waiting-reason":  "ImagePullBackOff",
			"kwok.kiln.dev/waiting-message": `Back-off pulling image "busybox:1.36"`,
		}, apiv1.CodeImagePull, "Back-off pulling image"},
		{"config", map[string]string{
			"kwok.kiln.dev/waiting-reason":  "CreateContainerConfigError",
			"kwok.kiln.dev/waiting-message": `secret "db" not found`,
		}, apiv1.CodeContainerConfig, `secret "db" not found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := withAnnotations(&job.Spec{ID: job.AttemptID{Run: "r-bbbbb", Node: c.name, Number: 1}, Processes: []job.Process{{Command: []string{"x"}}}}, c.annos)
			if err := h.Launch(ctx, spec); err != nil {
				t.Fatal(err)
			}
			st := h.wait(t, spec.ID)
			if st.Code != string(c.code) || !strings.Contains(st.Message, c.want) {
				t.Fatalf("got %s %q, want %s with %q", st.Code, st.Message, c.code, c.want)
			}
			// The decision outlives the pods: a stuck pod is deleted, yet
			// Observe, here and in a restarted engine, reads the same status.
			again, err := h.Observe(ctx, spec)
			if err != nil || again.Code != st.Code {
				t.Errorf("Observe after the decision: %+v, %v", again, err)
			}
			restarted, err := New(ctx, Config{Kubeconfig: h.c.Kubeconfig, Namespace: h.ns})
			if err != nil {
				t.Fatal(err)
			}
			defer restarted.Close()
			again, err = restarted.Observe(ctx, spec)
			if err != nil || again.Code != st.Code {
				t.Errorf("Observe after the decision: %+v, %v", again, err)
			}
		})
	}
}

func TestFailingRankStopsTheGang(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := context.Background()
	spec := withAnnotations(&job.Spec{ID: mustID("r-ccccc/train/1")}, nil)
	for i := range 3 {
		spec.Processes = append(spec.Processes, job.Process{Name: "node-" + string(rune('0'+i)), Host: i, Command: []string{"x"}})
	}
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	eventually(t, "the gang's pods to start", func() bool {
		pods = h.pods(t, spec.ID)
		return len(pods) == 3 && pods[1].Status.Phase == corev1.PodRunning
	})
	// Rank 1 fails as a kubelet would report it.
	p := pods[1]
	p.Status.Phase = corev1.PodFailed
	p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 3, Reason: "Error", FinishedAt: metav1.Now(),
	}}
	if _, err := h.c.Client.CoreV1().Pods(h.ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := h.wait(t, spec.ID)
	if st.ExitCode != 3 || st.Failed != "node-1" {
		t.Fatalf("got exit %d from %q, want 3 from node-1", st.ExitCode, st.Failed)
	}
	// The failed rank stays for its logs; the others are gone.
	eventually(t, "the rest of the gang to be stopped", func() bool {
		left := h.pods(t, spec.ID)
		return len(left) == 1 && left[0].Name == p.Name
	})
	if err := h.Release(ctx, spec.ID, false); err != nil {
		t.Fatal(err)
	}
	svcs, err := h.c.Client.CoreV1().Services(h.ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(svcs.Items) != 0 {
		t.Errorf("the released gang's service is still there (%v)", err)
	}
}

func TestGangSchedulerPodGroup(t *testing.T) {
	for _, gs := range []string{GangCoscheduling, GangVolcano} {
		t.Run(gs, func(t *testing.T) {
			h := newHarness(t, Config{GangScheduler: gs})
			ctx := context.Background()
			spec := withAnnotations(&job.Spec{ID: mustID("r-ddddd/train/1")}, nil)
			spec.Container.MilliCPU, spec.Container.Memory = 2000, 1<<30
			for i := range 3 {
				spec.Processes = append(spec.Processes, job.Process{Name: "node-" + string(rune('0'+i)), Host: i, Command: []string{"x"}})
			}
			if err := h.Launch(ctx, spec); err != nil {
				t.Fatal(err)
			}
			gvr := podGroupResources[gs]
			pg, err := h.dynamic.Resource(gvr).Namespace(h.ns).Get(ctx, names(spec.ID).Base, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			min, _, _ := unstructuredInt(pg.Object, "spec", "minMember")
			cpu, _, _ := unstructuredString(pg.Object, "spec", "minResources", "cpu")
			if min != 3 || cpu != "6" {
				t.Errorf("PodGroup minMember %d minResources.cpu %q, want 3 and 6", min, cpu)
			}
			for _, p := range h.pods(t, spec.ID) {
				if p.Spec.SchedulerName != h.cfg.SchedulerName {
					t.Errorf("pod %s has scheduler %q, want %q", p.Name, p.Spec.SchedulerName, h.cfg.SchedulerName)
				}
				if p.Labels["scheduling.x-k8s.io/pod-group"]+p.Annotations["scheduling.k8s.io/group-name"] != names(spec.ID).Base {
					t.Errorf("pod %s does not name its group", p.Name)
				}
			}
			if err := h.Abort(ctx, spec.ID, 0); err != nil {
				t.Fatal(err)
			}
			if st := h.wait(t, spec.ID); st.Signal != "SIGTERM" {
				t.Errorf("an aborted attempt reports %+v", st)
			}
			if err := h.Release(ctx, spec.ID, false); err != nil {
				t.Fatal(err)
			}
			if _, err := h.dynamic.Resource(gvr).Namespace(h.ns).Get(ctx, names(spec.ID).Base, metav1.GetOptions{}); err == nil {
				t.Error("the PodGroup outlived its attempt")
			}
		})
	}
}

func TestCleanPolicy(t *testing.T) {
	for _, c := range []struct {
		policy    CleanPolicy
		succeeded bool
		kept      int
	}{{CleanNever, true, 1}, {CleanOnSuccess, false, 1}, {CleanOnSuccess, true, 0}, {CleanAlways, false, 0}} {
		t.Run(string(c.policy), func(t *testing.T) {
			h := newHarness(t, Config{CleanPolicy: c.policy})
			code := "0"
			if !c.succeeded {
				code = "1"
			}
			spec := withAnnotations(&job.Spec{ID: mustID("r-eeeee/t/1"), Processes: []job.Process{{Command: []string{"x"}}}},
				map[string]string{"kwok.kiln.dev/exit-code": code})
			ctx := context.Background()
			if err := h.Launch(ctx, spec); err != nil {
				t.Fatal(err)
			}
			h.wait(t, spec.ID)
			if err := h.Release(ctx, spec.ID, c.succeeded); err != nil {
				t.Fatal(err)
			}
			eventually(t, fmt.Sprintf("%d pods to be kept", c.kept), func() bool { return len(h.pods(t, spec.ID)) == c.kept })
		})
	}
}

func TestCleanTTL(t *testing.T) {
	h := newHarness(t, Config{CleanPolicy: CleanAlways, CleanTTL: time.Second})
	spec := withAnnotations(&job.Spec{ID: mustID("r-hhhhh/t/1"), Processes: []job.Process{{Command: []string{"x"}}}},
		map[string]string{"kwok.kiln.dev/exit-code": "0"})
	ctx := context.Background()
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	h.wait(t, spec.ID)
	if err := h.Release(ctx, spec.ID, true); err != nil {
		t.Fatal(err)
	}
	pods := h.pods(t, spec.ID)
	if len(pods) != 1 || pods[0].Annotations[AnnoDeleteAfter] == "" {
		t.Fatalf("the pod should stay, marked for deletion, until the TTL passes: %d pods", len(pods))
	}
	eventually(t, "the janitor to delete the pod after its TTL", func() bool { return len(h.pods(t, spec.ID)) == 0 })
}

func TestLogsFromThePodLogAPI(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := context.Background()
	spec := withAnnotations(&job.Spec{ID: mustID("r-ggggg/train/1")}, nil)
	for i := range 2 {
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Host: i, Command: []string{"x"}})
	}
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gang to run", func() bool {
		st, err := h.Observe(ctx, spec)
		return err == nil && st.State == job.StateRunning && len(h.podsOf(names(spec.ID))) == 2 &&
			h.podsOf(names(spec.ID))[1].Status.Phase == corev1.PodRunning
	})
	// Following running containers streams until the context ends. The
	// test cluster's kwok serves every container the same two lines.
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var out strings.Builder
	if err := h.Logs(fctx, spec.ID, backend.LogOptions{Follow: true}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node-0 | kwok: line 1 of a container log", "node-1 | kwok: line 2 of a container log"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, out.String())
		}
	}
	if err := h.Logs(ctx, mustID("r-ggggg/nothing/1"), backend.LogOptions{}, &out); err == nil || !strings.Contains(err.Error(), "no pods") {
		t.Errorf("logs of an attempt without pods: %v", err)
	}
}

func TestEvictedPodIsCoded(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := context.Background()
	spec := withAnnotations(&job.Spec{ID: mustID("r-iiiii/t/1"), Processes: []job.Process{{Command: []string{"x"}}}}, nil)
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	eventually(t, "the pod to run", func() bool {
		pods := h.pods(t, spec.ID)
		if len(pods) == 1 {
			pod = pods[0]
		}
		return len(pods) == 1 && pod.Status.Phase == corev1.PodRunning
	})
	// The kubelet evicts it under memory pressure.
	pod.Status.Phase, pod.Status.Reason = corev1.PodFailed, "Evicted"
	pod.Status.Message = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi."
	if _, err := h.c.Client.CoreV1().Pods(h.ns).UpdateStatus(ctx, &pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	st := h.wait(t, spec.ID)
	if st.Code != string(apiv1.CodeEvicted) || !strings.Contains(st.Message, "low on resource: memory") || st.Permanent {
		t.Fatalf("got %+v, want a retryable %s with the kubelet's message", st, apiv1.CodeEvicted)
	}
}

func mustID(s string) job.AttemptID {
	id, err := job.ParseAttemptID(s)
	if err != nil {
		panic(err)
	}
	return id
}
