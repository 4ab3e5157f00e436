package kube

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"kiln.dev/kiln/internal/job"
)

// ReasonWaitingForScheduler is a queued attempt's reason while no
// scheduler has written why its pods wait (none serves their
// schedulerName, or it has not looked at them yet).
const ReasonWaitingForScheduler = "WaitingForScheduler"

// unbound reports whether pod waits for a scheduler to place it.
func unbound(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" && pod.Status.Phase == corev1.PodPending
}

// scheduled is the PodScheduled condition a scheduler wrote on pod, or nil.
func scheduled(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if c := &pod.Status.Conditions[i]; c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return c
		}
	}
	return nil
}

// waitReason says, in the scheduler's words if it wrote any, why pod is
// not placed: its reason ("Unschedulable") and message.
func waitReason(pod *corev1.Pod) (reason, msg string) {
	if c := scheduled(pod); c != nil && c.Reason != "" {
		return c.Reason, fmt.Sprintf("pod %s: %s", pod.Name, c.Message)
	}
	name := pod.Spec.SchedulerName
	if name == "" {
		name = corev1.DefaultSchedulerName
	}
	return ReasonWaitingForScheduler, fmt.Sprintf(
		"pod %s waits for scheduler %q, which has not said why it is not placed: is that scheduler running?", pod.Name, name)
}

// queueOf is why the processes of a running attempt that are not placed
// yet wait, or nil when every pod is bound to a node. The first waiting
// pod that a scheduler wrote a reason on speaks for the gang (a gang
// scheduler gives every pod of the group the same reason).
func queueOf(spec *job.Spec, pods map[int]*corev1.Pod) *job.Queue {
	var q *job.Queue
	for _, p := range spec.Processes {
		pod := pods[p.Host]
		if pod == nil || !unbound(pod) {
			continue
		}
		if q == nil {
			q = &job.Queue{}
		}
		q.Processes = append(q.Processes, p.Name)
		if reason, msg := waitReason(pod); q.Reason == "" || q.Reason == ReasonWaitingForScheduler && reason != q.Reason {
			q.Reason, q.Message = reason, msg
		}
	}
	return q
}

// queueChanged reports whether st, of a running attempt, waits to be
// placed for another reason than Watch last reported, or no longer waits,
// so the engine's records follow the scheduler.
func (b *Backend) queueChanged(id job.AttemptID, st job.Status) bool {
	if st.State != job.StateRunning {
		return false
	}
	key := ""
	if q := st.Queue; q != nil {
		key = fmt.Sprintf("%s\x00%s\x00%d", q.Reason, q.Message, len(q.Processes))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	was, seen := b.queues[id]
	if was == key && (seen || key == "") {
		return false
	}
	b.queues[id] = key
	return true
}
