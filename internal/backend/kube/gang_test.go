package kube

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// These tests run against the real coscheduling scheduler that
// hack/k8s-up.sh builds from sigs.k8s.io/scheduler-plugins and runs beside
// kube-scheduler as scheduler-plugins-scheduler. The test cluster has 4
// nodes of 8 CPUs: a pod of wholeNode takes a node alone, so a gang of 3
// such pods fits, and two of them do not.
const wholeNode = 4500

// coscheduled is a gang of n pods of wholeNode each, for the coscheduler.
func coscheduled(id string, n int) *job.Spec {
	spec := withAnnotations(&job.Spec{ID: mustID(id)}, nil)
	spec.Container.MilliCPU, spec.Container.Memory = wholeNode, 1<<30
	for i := range n {
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Host: i, Command: []string{"x"}})
	}
	return spec
}

// bound counts the attempt's pods a scheduler bound to a node.
func (h *harness) bound(t *testing.T, id job.AttemptID) int {
	t.Helper()
	n := 0
	for _, p := range h.pods(t, id) {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// waitRoom waits until n nodes each have wholeNode CPU that no pod asks
// for (pods of earlier tests are deleted as their namespaces go).
func waitRoom(t *testing.T, h *harness, n int) {
	t.Helper()
	ctx := t.Context()
	free := func() int {
		pods, err := h.c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]int64{}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || terminal(&p) {
				continue
			}
			for _, c := range p.Spec.Containers {
				used[p.Spec.NodeName] += c.Resources.Requests.Cpu().MilliValue()
			}
		}
		k := 0
		for i := range 4 {
			if 8000-used[fmt.Sprintf("kwok-node-%d", i)] >= wholeNode {
				k++
			}
		}
		return k
	}
	deadline := time.Now().Add(2 * time.Minute)
	for free() < n {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d nodes of the test cluster have %dm CPU free", n, wholeNode)
		}
		<-time.After(200 * time.Millisecond)
	}
}

// stop aborts an attempt and waits until its pods are gone.
func (h *harness) stop(t *testing.T, id job.AttemptID) {
	t.Helper()
	if err := h.Abort(t.Context(), id, 0); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(t.Context(), id, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the aborted gang's pods to go", func() bool { return len(h.pods(t, id)) == 0 })
}

func TestCoschedulingBindsAGangThatFitsWhole(t *testing.T) {
	h := newHarness(t, Config{GangScheduler: GangCoscheduling})
	waitRoom(t, h, 3)
	ctx := t.Context()
	spec := coscheduled("r-gfits/train/1", 3)
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the coscheduler to bind the whole gang", func() bool { return h.bound(t, spec.ID) == 3 })
	nodes := map[string]bool{}
	for _, p := range h.pods(t, spec.ID) {
		if p.Spec.SchedulerName != "scheduler-plugins-scheduler" {
			t.Errorf("pod %s went to scheduler %q", p.Name, p.Spec.SchedulerName)
		}
		nodes[p.Spec.NodeName] = true
	}
	if len(nodes) != 3 {
		t.Errorf("the gang's pods share nodes %v; each needs a node of its own", nodes)
	}
	eventually(t, "the gang to run, placed", func() bool {
		st, err := h.Observe(ctx, spec)
		return err == nil && st.State == job.StateRunning && st.Queue == nil
	})
	h.stop(t, spec.ID)
}

func TestCoschedulingNeverBindsHalfOfTwoGangs(t *testing.T) {
	h := newHarness(t, Config{GangScheduler: GangCoscheduling})
	waitRoom(t, h, 4)
	ctx := t.Context()
	a, b := coscheduled("r-ganga/train/1", 3), coscheduled("r-gangb/train/1", 3)
	for _, s := range []*job.Spec{a, b} {
		if err := h.Launch(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// Each fits alone; together they need 6 nodes of 4. The scheduler
	// binds one whole and none of the other, never some of each.
	var won, lost *job.Spec
	eventually(t, "one gang to be bound whole", func() bool {
		na, nb := h.bound(t, a.ID), h.bound(t, b.ID)
		if na > 0 && na < 3 && nb > 0 && nb < 3 {
			t.Fatalf("both gangs are half bound (%d and %d of 3): a deadlock", na, nb)
		}
		switch {
		case na == 3:
			won, lost = a, b
		case nb == 3:
			won, lost = b, a
		}
		return won != nil
	})
	// The other waits, unbound, with the scheduler's reason, for as long
	// as the first holds its nodes.
	var queued *job.Queue
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); <-time.After(100 * time.Millisecond) {
		if n := h.bound(t, lost.ID); n != 0 {
			t.Fatalf("%d pods of the gang that does not fit were bound beside the other", n)
		}
		st, err := h.Observe(ctx, lost)
		if err != nil || st.State != job.StateRunning {
			t.Fatalf("the waiting gang: %+v, %v", st, err)
		}
		queued = st.Queue
	}
	if queued == nil || len(queued.Processes) != 3 || queued.Reason != corev1.PodReasonUnschedulable {
		t.Fatalf("the waiting gang's queue %+v, want its 3 processes Unschedulable in the scheduler's words", queued)
	}
	t.Logf("the waiting gang is queued: %s", queued.Message)
	// Once the first ends, the second is bound whole.
	// The scheduler retries a gang it turned away on its own clock
	// (backoff, and Coscheduling's rejection of the group for a while),
	// not at once when the first gang's pods go; where the deletions'
	// event came before its pods reached the unschedulable queue (under
	// load), only that queue's flush, every 5 minutes, moves them.
	h.stop(t, won.ID)
	freed := time.Now()
	eventuallyWithin(t, 6*time.Minute, "the second gang to be bound whole once the first is gone", func() bool { return h.bound(t, lost.ID) == 3 })
	t.Logf("the second gang was bound whole %s after the first was stopped", time.Since(freed).Round(time.Second))
	h.stop(t, lost.ID)
}

func TestCoschedulingGangTooBigTimesOutWithTheSchedulersReason(t *testing.T) {
	h := newHarness(t, Config{GangScheduler: GangCoscheduling})
	waitRoom(t, h, 4)
	ctx := t.Context()
	spec := coscheduled("r-gbig/train/1", 5) // 5 nodes' worth on 4 nodes
	spec.Container.ScheduleTimeout = 8 * time.Second
	start := time.Now()
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	st := h.wait(t, spec.ID)
	if st.Code != string(apiv1.CodeUnschedulable) || !st.Permanent || !strings.Contains(st.Message, "within 8s of its creation") {
		t.Fatalf("got %s %q, want %s after 8s", st.Code, st.Message, apiv1.CodeUnschedulable)
	}
	// The scheduler's own words, not kiln's guess that no scheduler runs:
	// the Coscheduling plugin's rejection of the group ("optimistic
	// rejection in PostFilter", "PodGroup ... gets rejected", "rejection
	// in Unreserve", as the pods' turns come).
	if strings.Contains(st.Message, "has not said why") || !strings.Contains(st.Message, "nodes are available") ||
		!strings.Contains(st.Message, "reject") {
		t.Errorf("message %q does not carry the scheduler's reason", st.Message)
	}
	// Creation times have whole seconds: the timeout may come up to one
	// second before 8s after Launch began.
	if took := time.Since(start); took < 7*time.Second {
		t.Errorf("timed out after %s, before its 8s", took)
	}
	if n := h.bound(t, spec.ID); n != 0 {
		t.Errorf("%d pods of a gang that cannot fit were bound", n)
	}
	t.Logf("%s: %s", st.Code, st.Message)
}

func TestMisnamedSchedulerTimesOutFromCreation(t *testing.T) {
	h := newHarness(t, Config{GangScheduler: GangCoscheduling, SchedulerName: "no-such-scheduler"})
	ctx := t.Context()
	spec := coscheduled("r-gnone/train/1", 2)
	spec.Container.MilliCPU = 100
	spec.Container.ScheduleTimeout = 3 * time.Second
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gang to be queued", func() bool {
		st, err := h.Observe(ctx, spec)
		return err == nil && st.State == job.StateRunning && st.Queue != nil && st.Queue.Reason == ReasonWaitingForScheduler
	})
	st := h.wait(t, spec.ID)
	if st.Code != string(apiv1.CodeUnschedulable) || !strings.Contains(st.Message, `scheduler "no-such-scheduler"`) {
		t.Fatalf("got %s %q, want %s naming the scheduler", st.Code, st.Message, apiv1.CodeUnschedulable)
	}
}
