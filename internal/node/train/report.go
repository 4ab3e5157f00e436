package train

import (
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
)

// Report implements node.Reporter: conditions move with the node's
// phase, as Kubeflow Trainer reports a TrainJob's, and replica groups are
// counted when a gang starts and when it ends.
func (Handler) Report(ns *apiv1.NodeStatus, c node.Change) {
	switch {
	case c.Started != nil:
		ns.Replicas = replicasStarted(c.Started)
	case c.Ended != nil && len(c.Ended.Processes) > 0:
		ns.Replicas = replicasEnded(c.Ended)
	}
	if c.Phase != "" {
		conditions(ns, c.Phase, c.Reason, c.Message, c.Time)
	}
	placement(ns, c)
	if c.Phase == apiv1.PhaseSucceeded {
		completed(ns, c.Time)
	}
}

// setCondition upserts a condition by type; its transition time changes
// only when its status does.
func setCondition(ns *apiv1.NodeStatus, typ, status, reason, msg string, now time.Time) {
	for k := range ns.Conditions {
		c := &ns.Conditions[k]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, msg
		return
	}
	ns.Conditions = append(ns.Conditions, apiv1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, LastTransitionTime: now})
}

func hasCondition(ns *apiv1.NodeStatus, typ string) bool {
	return slices.ContainsFunc(ns.Conditions, func(c apiv1.Condition) bool { return c.Type == typ })
}

// conditions moves a training job's conditions with its phase, the way
// Kubeflow Trainer reports a TrainJob.
func conditions(ns *apiv1.NodeStatus, phase apiv1.Phase, reason, msg string, now time.Time) {
	if !hasCondition(ns, apiv1.ConditionCreated) {
		setCondition(ns, apiv1.ConditionCreated, "True", "Created", "the job was accepted", now)
	}
	off := func(typ, why string) {
		if hasCondition(ns, typ) {
			setCondition(ns, typ, "False", why, "", now)
		}
	}
	switch phase {
	case apiv1.PhaseWaiting:
		setCondition(ns, apiv1.ConditionQueued, "True", reason, msg, now)
	case apiv1.PhaseRunning:
		off(apiv1.ConditionFailed, "Retried")
		off(apiv1.ConditionQueued, "Admitted")
		off(apiv1.ConditionRestarting, "Restarted")
		setCondition(ns, apiv1.ConditionRunning, "True", reason, msg, now)
	case apiv1.PhaseRetrying:
		off(apiv1.ConditionRunning, "Failed")
		setCondition(ns, apiv1.ConditionRestarting, "True", reason, msg, now)
	case apiv1.PhaseSucceeded:
		off(apiv1.ConditionRunning, "Completed")
		setCondition(ns, apiv1.ConditionComplete, "True", "Succeeded", "the job succeeded", now)
	case apiv1.PhaseSuspended:
		off(apiv1.ConditionQueued, "Suspended")
		off(apiv1.ConditionRunning, "Suspended")
		setCondition(ns, apiv1.ConditionSuspended, "True", reason, msg, now)
	case apiv1.PhasePending:
		off(apiv1.ConditionSuspended, reason)
	case apiv1.PhaseFailed, apiv1.PhaseCancelled:
		off(apiv1.ConditionQueued, string(phase))
		off(apiv1.ConditionRunning, string(phase))
		off(apiv1.ConditionRestarting, string(phase))
		setCondition(ns, apiv1.ConditionFailed, "True", reason, msg, now)
	}
}

// replicaGroup is the group a process belongs to: its name up to the
// first '-' ("node-1-0" is in "node").
func replicaGroup(process string) string {
	group, _, _ := strings.Cut(process, "-")
	if group == "" {
		return "main"
	}
	return group
}

// replicasStarted counts a starting gang's processes as active.
func replicasStarted(spec *job.Spec) []apiv1.ReplicaGroupStatus {
	var out []apiv1.ReplicaGroupStatus
	for _, p := range spec.Processes {
		out = countReplica(out, replicaGroup(p.Name), func(g *apiv1.ReplicaGroupStatus) { g.Active++ })
	}
	return out
}

// replicasEnded counts how each process of an ended gang exited, or
// that it was stopped.
func replicasEnded(st *job.Status) []apiv1.ReplicaGroupStatus {
	names := make([]string, 0, len(st.Processes))
	for name := range st.Processes {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []apiv1.ReplicaGroupStatus
	for _, name := range names {
		code, stopped := st.Processes[name], slices.Contains(st.StoppedProcesses, name)
		left := slices.Contains(st.LeftRunning, name)
		out = countReplica(out, replicaGroup(name), func(g *apiv1.ReplicaGroupStatus) {
			switch {
			case left:
				g.Active++ // left to end on its own: running still
			case stopped:
				g.Stopped++
			case code == 0:
				g.Succeeded++
			default:
				g.Failed++
			}
		})
	}
	return out
}

func countReplica(groups []apiv1.ReplicaGroupStatus, name string, f func(*apiv1.ReplicaGroupStatus)) []apiv1.ReplicaGroupStatus {
	for k := range groups {
		if groups[k].Name == name {
			f(&groups[k])
			return groups
		}
	}
	groups = append(groups, apiv1.ReplicaGroupStatus{Name: name})
	f(&groups[len(groups)-1])
	return groups
}
