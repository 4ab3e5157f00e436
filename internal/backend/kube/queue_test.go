package kube

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// bound is a running pod on a node.
func bound(h int) *corev1.Pod {
	p := podAt(h, corev1.PodRunning, running("node-"+string(rune('0'+h))))
	p.Spec.NodeName = "kwok-node-0"
	return p
}

// pending is a pod no node took yet; cond, if not empty, is the reason
// its scheduler wrote, with msg.
func pending(h int, scheduler, cond, msg string) *corev1.Pod {
	p := podAt(h, corev1.PodPending)
	p.Spec.SchedulerName = scheduler
	if cond != "" {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: cond, Message: msg}}
	}
	return p
}

func TestDecideQueuedGang(t *testing.T) {
	const pgMsg = "0/4 nodes are available: pre-filter pod p1 cannot find enough sibling pods"
	timed := func(s *job.Spec, d time.Duration) *job.Spec { s.Container.ScheduleTimeout = d; return s }
	cases := map[string]struct {
		spec     *job.Spec
		pods     map[int]*corev1.Pod
		now      time.Duration
		lim      limits
		state    job.State
		code     apiv1.Code
		reason   string   // the queue's, if it is queued
		queued   []string // processes that wait
		contains string   // in the queue's message, or the status's
	}{
		"every pod bound: running, not queued": {
			spec: gangSpec(2, ""), pods: map[int]*corev1.Pod{0: bound(0), 1: bound(1)}, state: job.StateRunning,
		},
		"half bound: queued with the scheduler's reason": {
			spec:  gangSpec(3, ""),
			pods:  map[int]*corev1.Pod{0: bound(0), 1: pending(1, "scheduler-plugins-scheduler", "Unschedulable", pgMsg), 2: pending(2, "scheduler-plugins-scheduler", "", "")},
			state: job.StateRunning, reason: "Unschedulable", queued: []string{"node-1", "node-2"}, contains: "pod p1: " + pgMsg,
		},
		"no scheduler wrote a reason: queued, waiting for the scheduler": {
			spec:  gangSpec(2, ""),
			pods:  map[int]*corev1.Pod{0: pending(0, "nobody", "", ""), 1: pending(1, "nobody", "", "")},
			now:   time.Hour,
			state: job.StateRunning, reason: ReasonWaitingForScheduler, queued: []string{"node-0", "node-1"}, contains: `scheduler "nobody"`,
		},
		"a task's pod without a scheduler name waits for the default scheduler": {
			spec:  &job.Spec{ID: mustID("r/t/1"), Processes: []job.Process{{}}},
			pods:  map[int]*corev1.Pod{0: pending(0, "", "", "")},
			state: job.StateRunning, reason: ReasonWaitingForScheduler, queued: []string{""}, contains: `"default-scheduler"`,
		},
		"the spec's timeout counts from creation without any condition": {
			spec: timed(gangSpec(2, ""), 10*time.Second),
			pods: map[int]*corev1.Pod{0: pending(0, "nobody", "", ""), 1: pending(1, "nobody", "", "")},
			now:  10 * time.Second, state: job.StateExited, code: apiv1.CodeUnschedulable, contains: `within 10s of its creation: pod p0 waits for scheduler "nobody"`,
		},
		"before the timeout it is queued still": {
			spec: timed(gangSpec(2, ""), 10*time.Second),
			pods: map[int]*corev1.Pod{0: pending(0, "nobody", "", ""), 1: pending(1, "nobody", "", "")},
			now:  9 * time.Second, state: job.StateRunning, reason: ReasonWaitingForScheduler, queued: []string{"node-0", "node-1"},
		},
		"the backend's limit applies when the spec sets none": {
			spec: gangSpec(2, ""), lim: limits{Unschedulable: time.Minute},
			pods: map[int]*corev1.Pod{0: bound(0), 1: pending(1, "s", "Unschedulable", pgMsg)},
			now:  time.Minute, state: job.StateExited, code: apiv1.CodeUnschedulable, contains: pgMsg,
		},
		"a gang's timeout quotes every distinct reason of its pods": {
			spec: timed(gangSpec(3, ""), 8*time.Second),
			pods: map[int]*corev1.Pod{
				0: pending(0, "s", "Unschedulable", "0/1 nodes are available: 1 optimistic rejection in PostFilter."),
				1: pending(1, "s", "Unschedulable", "0/1 nodes are available: 1 optimistic rejection in PostFilter."),
				2: pending(2, "s", "Unschedulable", "0/4 nodes are available: 4 Insufficient cpu. PodGroup ns/g gets rejected due to Pod p2 is unschedulable even after PostFilter"),
			},
			now: 8 * time.Second, state: job.StateExited, code: apiv1.CodeUnschedulable,
			contains: "pod p0: 0/1 nodes are available: 1 optimistic rejection in PostFilter.; pod p2: 0/4 nodes are available: 4 Insufficient cpu. PodGroup ns/g gets rejected",
		},
		"a bound pod never times out": {
			spec: timed(gangSpec(1, ""), time.Second), pods: map[int]*corev1.Pod{0: bound(0)},
			now: time.Hour, state: job.StateRunning,
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			st := decide(c.spec, c.pods, t0.Add(c.now), c.lim)
			if st.State != c.state || st.Code != string(c.code) {
				t.Fatalf("state %v code %q (%s), want %v %q", st.State, st.Code, st.Message, c.state, c.code)
			}
			switch {
			case c.reason == "" && st.Queue != nil:
				t.Fatalf("queued %+v, want every process placed", st.Queue)
			case c.reason != "" && st.Queue == nil:
				t.Fatalf("not queued, want queued with %q", c.reason)
			case c.reason != "":
				if st.Queue.Reason != c.reason || strings.Join(st.Queue.Processes, ",") != strings.Join(c.queued, ",") {
					t.Errorf("queue %+v, want reason %q for %v", st.Queue, c.reason, c.queued)
				}
				if !strings.Contains(st.Queue.Message, c.contains) {
					t.Errorf("queue message %q lacks %q", st.Queue.Message, c.contains)
				}
			default:
				if !strings.Contains(st.Message, c.contains) {
					t.Errorf("message %q lacks %q", st.Message, c.contains)
				}
			}
			if st.State == job.StateExited && !st.Permanent {
				t.Error("a pod no node took in time is a permanent failure of the attempt")
			}
		})
	}
}
