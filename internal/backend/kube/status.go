package kube

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// limits bound how long pods may stay stuck before the attempt fails.
type limits struct {
	// Unschedulable is how long pods may wait for a node when the spec
	// sets no schedule timeout; 0 waits forever.
	Unschedulable time.Duration
	// Stuck is how long a container may wait for its image or its
	// configuration (a missing secret) before the attempt fails.
	Stuck time.Duration
}

// procState is what became of one process's container.
type procState struct {
	name       string
	terminated *corev1.ContainerStateTerminated
	// podFailed is set when the pod ended without the container ending
	// (evicted, deadline exceeded).
	podFailed *corev1.Pod
}

// decide computes an attempt's status from its pods. It is a pure
// function of its inputs, so every engine, and every restart, reads the
// same status from the same pods. How a gang ended is job.Decide's rule,
// the same on every backend.
func decide(spec *job.Spec, pods map[int]*corev1.Pod, now time.Time, lim limits) job.Status {
	hs := hosts(spec)
	for _, h := range hs {
		if pods[h] == nil {
			// Not launched yet, or launched and a pod since vanished:
			// Observe tells which (vanished), from the cluster.
			return job.Status{State: job.StateUnknown}
		}
	}
	st := job.Status{State: job.StateRunning, Processes: map[string]int{}}
	for _, h := range hs {
		if t := pods[h].Status.StartTime; t != nil && (st.StartedAt.IsZero() || t.Time.Before(st.StartedAt)) {
			st.StartedAt = t.Time
		}
		if stuck, ok := stuckPod(pods[h], now, lim); ok {
			return stuck
		}
	}
	if stuck, ok := unplaced(spec, pods, now, lim); ok {
		return stuck
	}
	procs := make([]procState, len(spec.Processes))
	members := make([]job.Member, len(spec.Processes))
	for i, p := range spec.Processes {
		procs[i] = procOf(p, pods[p.Host])
		members[i] = procs[i].member()
		members[i].Host = p.Host
	}
	out := job.Decide(members, job.RuleOf(spec))
	st.Dropped = out.Dropped
	switch {
	case !out.Decided:
		st.Queue = queueOf(spec, pods)
		return st
	case out.Failed:
		return failed(st, &procs[slices.IndexFunc(procs, func(p procState) bool { return p.name == out.Decider })], procs, spec.Clean == job.CleanNone)
	}
	return succeeded(st, spec, procs)
}

// procOf finds process p's container in its pod.
func procOf(p job.Process, pod *corev1.Pod) procState {
	ps := procState{name: p.Name}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name == containerName(p) {
			ps.terminated = cs.State.Terminated
		}
	}
	if ps.terminated == nil && pod.Status.Phase == corev1.PodFailed {
		ps.podFailed = pod
	}
	return ps
}

// member is how the process stands, for job.Decide. A pod that failed as
// a whole (evicted) lost its process.
func (p *procState) member() job.Member {
	switch {
	case p.podFailed != nil:
		return job.Member{Name: p.name, Ended: true, Exit: -1, Lost: true}
	case p.terminated != nil:
		return job.Member{Name: p.name, Ended: true, Exit: int(p.terminated.ExitCode), FinishedAt: p.terminated.FinishedAt.Time}
	}
	return job.Member{Name: p.name}
}

// failed fills in st for an attempt that failed through process f. A pod
// that failed as a whole was the machine's doing, not the task's.
func failed(st job.Status, f *procState, procs []procState, left bool) job.Status {
	st.State = job.StateExited
	fill(&st, procs, left)
	if len(procs) > 1 {
		st.Failed = f.name
	}
	if f.podFailed != nil {
		st.ExitCode, st.System = -1, true
		st.Message = fmt.Sprintf("pod %s failed: %s: %s", f.podFailed.Name, f.podFailed.Status.Reason, f.podFailed.Status.Message)
		if f.podFailed.Status.Reason == "Evicted" {
			st.Code = string(apiv1.CodeEvicted)
		} else {
			st.Code = string(apiv1.CodePodLost)
		}
		return st
	}
	st.ExitCode, st.FinishedAt = int(f.terminated.ExitCode), f.terminated.FinishedAt.Time
	if f.terminated.Reason == "OOMKilled" {
		st.Code = string(apiv1.CodeOOMKilled)
		st.Message = fmt.Sprintf("container %s was OOMKilled (exit code %d): it used more memory than its limit", containerName(job.Process{Name: f.name}), f.terminated.ExitCode)
	}
	return st
}

// succeeded fills in st for an attempt whose processes all ended (or
// whose leader ended well), reading the output parameters back and
// checking that the declared artifacts were written.
func succeeded(st job.Status, spec *job.Spec, procs []procState) job.Status {
	st.State = job.StateExited
	fill(&st, procs, spec.Clean == job.CleanNone)
	if len(spec.Outputs) == 0 && len(spec.Artifacts) == 0 && spec.Store == nil {
		return st
	}
	msg := ""
	for _, p := range procs {
		if p.terminated != nil && p.terminated.Message != "" {
			msg = p.terminated.Message
			break
		}
	}
	out, stored, err := parseTermination(msg, spec.Outputs)
	if err != nil {
		st.OutputError = err.Error()
		return st
	}
	if spec.Store != nil && spec.Store.Outputs != "" && stored == "" {
		st.OutputError = "the task's wrapper (kiln artifact-exec) recorded no stored artifacts in its termination message"
		return st
	}
	st.Outputs, st.Artifacts = out, stored
	return st
}

// fill records every process's exit code and the latest finish. A
// process still running when its gang's end was decided is stopped with
// its pod, or, with left (cleanPodPolicy None), left running in it.
func fill(st *job.Status, procs []procState, left bool) {
	for _, p := range procs {
		code := -1
		if p.terminated != nil {
			code = int(p.terminated.ExitCode)
			if t := p.terminated.FinishedAt.Time; t.After(st.FinishedAt) {
				st.FinishedAt = t
			}
		}
		if p.name == "" {
			continue
		}
		st.Processes[p.name] = code
		switch {
		case p.terminated != nil || p.podFailed != nil:
		case left:
			st.LeftRunning = append(st.LeftRunning, p.name)
		default:
			st.StoppedProcesses = append(st.StoppedProcesses, p.name)
		}
	}
}

// stuckPod reports a pod that cannot make progress on its own: its image
// cannot be pulled or its container cannot be configured, for longer than
// the limits allow. A pod no node takes is unplaced's.
func stuckPod(pod *corev1.Pod, now time.Time, lim limits) (job.Status, bool) {
	age := now.Sub(pod.CreationTimestamp.Time)
	stuck := func(code apiv1.Code, msg string) (job.Status, bool) {
		return job.Status{State: job.StateExited, ExitCode: -1, Code: string(code), Message: msg, Permanent: true}, true
	}
	if pod.Status.Phase != corev1.PodPending {
		return job.Status{}, false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		w := cs.State.Waiting
		if w == nil {
			continue
		}
		msg := fmt.Sprintf("pod %s, container %s: %s: %s", pod.Name, cs.Name, w.Reason, w.Message)
		switch w.Reason {
		case "InvalidImageName", "ErrImageNeverPull":
			return stuck(apiv1.CodeImagePull, msg)
		case "ErrImagePull", "ImagePullBackOff":
			if age >= lim.Stuck {
				return stuck(apiv1.CodeImagePull, msg)
			}
		case "CreateContainerConfigError", "CreateContainerError":
			if age >= lim.Stuck {
				return stuck(apiv1.CodeContainerConfig, msg)
			}
		}
	}
	return job.Status{}, false
}

// terminal reports whether a pod has ended.
func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
