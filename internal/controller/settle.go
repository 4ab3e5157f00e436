package controller

import (
	"context"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// settle carries out what the round's changes mean for other nodes: each
// node that ended lets its dependents start or skips them, and tells its
// group; a dynamic task whose command succeeded expands; a group whose
// children ended is judged. It runs until nothing more follows, so a
// round's cascade of skips and starts is written in the round.
func (c *Controller) settle(ctx context.Context, r *round) {
	rs := r.rs
	for {
		switch {
		case len(r.doneQ) > 0:
			i := r.doneQ[0]
			r.doneQ = r.doneQ[1:]
			c.results.cacheEnded(ctx, r, i)
			c.results.artifactsEnded(ctx, r, i)
			r.nodeDone(i)
		case len(rs.unresolved) > 0:
			i := rs.unresolved[0]
			rs.unresolved = rs.unresolved[1:]
			c.resolve(ctx, r, i)
		case len(r.expandQ) > 0:
			i := r.expandQ[0]
			r.expandQ = r.expandQ[1:]
			c.expand(ctx, r, i, nil)
		case len(r.touched) > 0:
			for p := range r.touched {
				delete(r.touched, p)
				c.gather(r, p)
				break
			}
		default:
			return
		}
	}
}

// nodeDone tells node i's dependents and its group that it ended.
func (r *round) nodeDone(i int) {
	rs := r.rs
	for _, d := range rs.plan.Graph.Downstream(i) {
		rs.pendingUp[d]--
		if rs.nodes[d].status.Phase == apiv1.PhasePending {
			rs.unresolved = append(rs.unresolved, d)
		}
	}
	if p := rs.parent[i]; p >= 0 {
		if g := rs.groups[p]; g != nil {
			g.childDone(rs, i)
			r.release(p)
		}
		r.touched[p] = true
	}
}

// resolve decides what becomes of pending node i now that some of its
// upstream nodes ended: nothing yet, skipped (its trigger rule can no
// longer be met, its condition is false, or the run or its group is
// stopping), or started.
func (c *Controller) resolve(ctx context.Context, r *round, i int) {
	rs := r.rs
	// A node two upstream nodes released in one round (two cache hits) is
	// resolved once: queued twice, it would start two attempts.
	if rs.nodes[i].status.Phase != apiv1.PhasePending || rs.ready.has(i) {
		return
	}
	r.runStarted() // the run is under way from its first decision, even one that skips
	met, final, code, why := rs.trigger(i)
	switch {
	case !final:
		return
	case !met:
		r.skipNode(i, code, why)
		return
	}
	if why := rs.blocked(i); why != "" {
		r.skipNode(i, "", why)
		return
	}
	if ok := r.condition(i); ok {
		c.begin(ctx, r, i)
	}
}

// trigger applies node i's trigger rule to its upstream nodes; when it is
// not met, code and why say which upstream node stopped it.
func (rs *runState) trigger(i int) (met, final bool, code apiv1.Code, why string) {
	ups := rs.plan.Graph.Upstream(i)
	phases := make([]apiv1.Phase, len(ups))
	for k, u := range ups {
		phases[k] = rs.nodes[u].status.Phase
	}
	if rs.plan.Tasks[i].Depends != nil {
		return rs.depends(i, ups)
	}
	rule := rs.plan.Tasks[i].Trigger
	met, final = triggerMet(rule, phases)
	if met || !final {
		return met, final, "", ""
	}
	if rule == apiv1.TriggerAllSucceeded || rule == "" {
		for _, u := range ups {
			switch p := rs.nodes[u].status.Phase; p {
			case apiv1.PhaseFailed, apiv1.PhaseCancelled:
				return false, true, apiv1.CodeUpstreamFailed, fmt.Sprintf("not started: upstream task %s %s", rs.nodes[u].status.Name, pastTense(p))
			case apiv1.PhaseSkipped:
				return false, true, "", fmt.Sprintf("not started: upstream task %s was skipped", rs.nodes[u].status.Name)
			}
		}
	}
	return false, true, apiv1.CodeTriggerRule, fmt.Sprintf("not started: its trigger rule %s was not met by its upstream tasks (%s)", rule, rs.upstreamPhases(ups))
}

func (rs *runState) upstreamPhases(ups []int) string {
	s := ""
	for k, u := range ups {
		if k > 0 {
			s += ", "
		}
		s += rs.nodes[u].status.Name + " " + string(rs.nodes[u].status.Phase)
	}
	return s
}

func pastTense(p apiv1.Phase) string {
	if p == apiv1.PhaseCancelled {
		return "was cancelled"
	}
	return "failed"
}

// blocked says why node i, whose trigger rule is met, must not start: the
// run is cancelled, or failing and the node runs only on success, or its
// group can no longer succeed. "" lets it start.
func (rs *runState) blocked(i int) string {
	switch {
	case rs.stopping == apiv1.PhaseCancelling:
		return "not started: " + rs.stopMsg
	case rs.stopping != "" && !rs.runsOnFailure(i):
		return "not started: " + rs.stopMsg
	}
	if p := rs.parent[i]; p >= 0 && rs.groups[p] != nil && rs.groups[p].hopeless {
		return fmt.Sprintf("not started: task %s can no longer succeed", rs.nodes[p].status.Name)
	}
	return ""
}

// runsOnFailure reports whether node i, or a group it is in, has a
// trigger rule other than allSucceeded: such a node runs on while the
// run fails (a report, the onExit tasks). A run stopped on request runs
// its exit handlers alone.
func (rs *runState) runsOnFailure(i int) bool {
	if rs.stopCode == apiv1.CodeStopped {
		return rs.inExitHandler(i)
	}
	for ; i >= 0; i = rs.parent[i] {
		if t := &rs.plan.Tasks[i]; t.Trigger != apiv1.TriggerAllSucceeded || t.Depends != nil {
			return true
		}
	}
	return false
}

// inExitHandler reports whether node i is the run's exit handler or one
// of its tasks.
func (rs *runState) inExitHandler(i int) bool {
	exit, ok := rs.plan.Index[workflow.ExitNode]
	for ; ok && i >= 0; i = rs.parent[i] {
		if i == exit {
			return true
		}
	}
	return false
}

// begin starts node i: a node that runs attempts waits for room, a gate
// starts waiting, a group expands into its children.
func (c *Controller) begin(ctx context.Context, r *round, i int) {
	k := r.rs.kinds[i]
	switch {
	case k.waiter != nil:
		c.waits.start(ctx, r, i)
	case k.attempts:
		if !c.results.fromCache(ctx, r, i) {
			r.rs.enqueue(i)
		}
	default:
		c.expand(ctx, r, i, nil)
	}
}

// skipNode ends node i, which never started, as Skipped.
func (r *round) skipNode(i int, code apiv1.Code, msg string) {
	if ns := r.rs.nodes[i]; !ns.status.Phase.Done() {
		r.rs.ready.remove(i)
		reason := "Skipped"
		if code == apiv1.CodeUpstreamFailed {
			reason = "UpstreamFailed"
		}
		r.setNode(i, apiv1.PhaseSkipped, reason, code, msg)
	}
}
