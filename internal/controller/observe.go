package controller

import (
	"context"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
)

// observe records what became of each dirty node's attempt, from the
// backend's report when it says enough, else by asking the backend. Nodes
// it could not ask about stay dirty.
func (c *Controller) observe(ctx context.Context, r *round, dirty map[int]*report) error {
	var errs []error
	for i, rep := range dirty {
		if !r.rs.active[i] {
			continue
		}
		ns := r.rs.nodes[i]
		if rep != nil && rep.attempt == ns.attempt.Number && (!rep.status.Succeeded() || !r.rs.hasOutputs(i)) {
			c.observedEnd(ctx, r, i, &rep.status)
			continue
		}
		if ns.spec == nil {
			spec, err := c.buildSpec(ctx, r.rs, i, ns.attempt.Number, r.rs.specHosts(i))
			if err != nil {
				c.buildFailed(r, i, err)
				continue
			}
			ns.spec = spec
			r.rejoin(i)
		}
		st, err := c.cfg.Backend.Observe(ctx, ns.spec)
		if err != nil {
			r.rs.markDirty(i)
			errs = append(errs, fmt.Errorf("observing %s: %w", ns.spec.ID, err))
			continue
		}
		c.observedEnd(ctx, r, i, &st)
	}
	return errors.Join(errs...)
}

// observedEnd is observed, with node i's last progress report read first
// when its attempt exited.
func (c *Controller) observedEnd(ctx context.Context, r *round, i int, st *job.Status) {
	if st.State == job.StateExited {
		c.reports.last(ctx, r, i)
	}
	c.observed(r, i, st)
}

// hasOutputs reports whether node i declares outputs that only Observe
// reads back (an exit report does not carry them).
func (rs *runState) hasOutputs(i int) bool {
	o := rs.plan.Tasks[i].Spec.Outputs
	return o != nil && (len(o.Parameters) > 0 || len(o.Artifacts) > 0)
}

// observed applies one status report to node i.
func (c *Controller) observed(r *round, i int, st *job.Status) {
	switch st.State {
	case job.StateRunning:
		r.dropped(i, st) // an elastic gang that lost a host runs on
		r.queued(i, st)
	case job.StateUnknown:
		// Recorded as started but never launched (the engine stopped in
		// between): launch it now, under the same ID, unless it is being
		// stopped: then it ends as stopped, never started.
		if why := r.rs.nodes[i].stop; why != "" {
			c.stopped(r, i, why)
			return
		}
		r.launch = append(r.launch, i)
	case job.StateLost:
		if why := r.rs.nodes[i].stop; why != "" {
			c.stopped(r, i, why)
			return
		}
		c.attemptEnded(r, i, node.Verdict{
			Phase: apiv1.PhaseFailed, Code: apiv1.CodeAttemptLost, System: true,
			Message: "the attempt's supervisor exited before the attempt did; whatever was left of it was stopped",
		})
	case job.StateExited:
		c.exited(r, i, st)
	}
}

// exited records how node i's attempt ended: as the engine stopped it, if
// it did, else as the node's handler judges it.
func (c *Controller) exited(r *round, i int, st *job.Status) {
	ns := r.rs.nodes[i]
	r.report(i, node.Change{Ended: st})
	if st.StartError == "" && st.Signal == "" && st.ExitCode >= 0 {
		ns.attempt.ExitCode = &st.ExitCode
	}
	ns.attempt.Signal = st.Signal
	r.dropped(i, st)
	if !st.StartedAt.IsZero() {
		ns.attempt.StartedAt = &st.StartedAt
	}
	if !st.FinishedAt.IsZero() {
		ns.attempt.FinishedAt = &st.FinishedAt
	}
	r.logsLost(i, st)
	if why := ns.stop; why != "" {
		c.stopped(r, i, why)
	} else {
		c.attemptEnded(r, i, r.rs.kinds[i].Judge(&r.rs.plan.Tasks[i], st))
	}
	r.logsLostEvent(i, st)
}

// stopped records the end of an attempt the engine stopped, for why.
func (c *Controller) stopped(r *round, i int, why apiv1.Code) {
	switch why {
	case apiv1.CodeCancelled:
		r.endAttempt(i, apiv1.PhaseCancelled, apiv1.CodeCancelled, "stopped on request", false)
		r.setNode(i, apiv1.PhaseCancelled, "Cancelled", apiv1.CodeCancelled, "stopped on request")
	case apiv1.CodeSuspended:
		r.endAttempt(i, apiv1.PhaseCancelled, apiv1.CodeSuspended, "stopped: the run was suspended", false)
		r.suspendNode(i, "suspended on request; its processes were stopped and its resources released")
	case apiv1.CodeShareAborted, apiv1.CodePartIdle:
		c.attemptEnded(r, i, node.Verdict{Phase: apiv1.PhaseFailed, Code: why, Message: r.rs.abortMessage(i)})
	case apiv1.CodePreempted:
		c.attemptEnded(r, i, node.Verdict{Phase: apiv1.PhaseFailed, Code: why, Message: r.rs.preemptedMessage(i), System: true})
	case apiv1.CodeAttemptTimeout:
		c.attemptEnded(r, i, node.Verdict{
			Phase: apiv1.PhaseFailed, Code: why,
			Message: fmt.Sprintf("the attempt exceeded the task's timeout of %s", r.rs.plan.Tasks[i].Timeout),
		})
	default:
		c.attemptEnded(r, i, node.Verdict{Phase: apiv1.PhaseFailed, Code: why, Message: r.rs.stopMsg, Permanent: true})
	}
}
