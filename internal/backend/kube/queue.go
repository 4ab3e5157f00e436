package kube

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
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

// maxReasons bounds how many pods' distinct reasons a queue's message
// quotes.
const maxReasons = 3

// queueOf is why the processes of a running attempt that are not placed
// yet wait, or nil when every pod is bound to a node. Its reason is the
// first a scheduler wrote; its message quotes every distinct reason the
// waiting pods were given (a gang scheduler rejects the pod that does not
// fit with the group's reason, and the others it held with its own).
func queueOf(spec *job.Spec, pods map[int]*corev1.Pod) *job.Queue {
	var q *job.Queue
	var msgs []string
	seen := map[string]bool{}
	for _, h := range hosts(spec) {
		pod := pods[h]
		if pod == nil || !unbound(pod) {
			continue
		}
		if q == nil {
			q = &job.Queue{}
		}
		for _, p := range spec.Processes {
			if p.Host == h {
				q.Processes = append(q.Processes, p.Name)
			}
		}
		reason, msg := waitReason(pod)
		if q.Reason == "" || q.Reason == ReasonWaitingForScheduler && reason != q.Reason {
			q.Reason = reason
		}
		if key := strings.ReplaceAll(msg, pod.Name, ""); !seen[key] {
			seen[key] = true
			msgs = append(msgs, msg)
		}
	}
	if q == nil {
		return nil
	}
	if len(msgs) > maxReasons {
		msgs = append(msgs[:maxReasons], fmt.Sprintf("and %d more", len(msgs)-maxReasons))
	}
	q.Message = strings.Join(msgs, "; ")
	return q
}

// unplaced fails an attempt whose pods were not all placed within the
// schedule timeout (the spec's, else the backend's), counted from their
// creation, whether or not a scheduler said why they wait: the pods of a
// scheduler that does not run get no condition at all.
func unplaced(spec *job.Spec, pods map[int]*corev1.Pod, now time.Time, lim limits) (job.Status, bool) {
	timeout := spec.Container.ScheduleTimeout
	if timeout == 0 {
		timeout = lim.Unschedulable
	}
	q := queueOf(spec, pods)
	if timeout <= 0 || q == nil {
		return job.Status{}, false
	}
	for _, pod := range pods {
		if unbound(pod) && now.Sub(pod.CreationTimestamp.Time) >= timeout {
			return job.Status{
				State: job.StateExited, ExitCode: -1, Code: string(apiv1.CodeUnschedulable), Permanent: true,
				Message: fmt.Sprintf("not placed on a node within %s of its creation: %s", timeout, q.Message),
			}, true
		}
	}
	return job.Status{}, false
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
