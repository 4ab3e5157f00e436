package controller

import (
	"context"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
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
		if rep != nil && rep.attempt == ns.attempt.Number && (!rep.status.Succeeded() || len(r.rs.plan.Tasks[i].Spec.Outputs.Params()) == 0) {
			c.observed(r, i, &rep.status)
			continue
		}
		if ns.spec == nil {
			spec, err := c.buildSpec(ctx, r.rs, i, ns.attempt.Number)
			if err != nil {
				c.attemptFailed(r, i, codeOr(err, apiv1.CodeStart), err.Error(), true)
				continue
			}
			ns.spec = spec
		}
		st, err := c.cfg.Backend.Observe(ctx, ns.spec)
		if err != nil {
			r.rs.markDirty(i)
			errs = append(errs, fmt.Errorf("observing %s: %w", ns.spec.ID, err))
			continue
		}
		c.observed(r, i, &st)
	}
	return errors.Join(errs...)
}

// observed applies one status report to node i.
func (c *Controller) observed(r *round, i int, st *job.Status) {
	switch st.State {
	case job.StateRunning:
	case job.StateUnknown:
		// Recorded as started but never launched (the engine stopped in
		// between): launch it now, under the same ID.
		r.launch = append(r.launch, i)
	case job.StateLost:
		c.attemptFailed(r, i, apiv1.CodeAttemptLost, "the attempt's supervisor exited before the attempt did", false)
	case job.StateExited:
		c.exited(r, i, st)
	}
}

func (c *Controller) exited(r *round, i int, st *job.Status) {
	ns := r.rs.nodes[i]
	if r.rs.plan.Tasks[i].Train != nil && len(st.Processes) > 0 {
		ns.status.Replicas = replicasEnded(st)
	}
	ns.attempt.ExitCode = &st.ExitCode
	if !st.StartedAt.IsZero() {
		ns.attempt.StartedAt = &st.StartedAt
	}
	if !st.FinishedAt.IsZero() {
		ns.attempt.FinishedAt = &st.FinishedAt
	}
	switch {
	case ns.stop == apiv1.CodeCancelled:
		c.attemptCancelled(r, i)
	case ns.stop == apiv1.CodeSuspended:
		c.endAttempt(r, i, apiv1.PhaseCancelled, apiv1.CodeSuspended, "stopped: the job was suspended")
		c.suspendNode(r, i, "suspended on request; its processes were stopped and its resources released")
	case ns.stop == apiv1.CodeAttemptTimeout:
		c.attemptFailed(r, i, apiv1.CodeAttemptTimeout, fmt.Sprintf("the attempt exceeded the task's timeout of %s", r.rs.plan.Tasks[i].Timeout), false)
	case ns.stop == apiv1.CodeRunTimeout:
		c.attemptFailed(r, i, apiv1.CodeRunTimeout, r.rs.stopMsg, true)
	case st.Code != "":
		c.attemptFailed(r, i, apiv1.Code(st.Code), st.Message, st.Permanent)
	case st.NotFound:
		c.attemptFailed(r, i, apiv1.CodeCommandNotFound, st.StartError, true)
	case st.StartError != "":
		c.attemptFailed(r, i, apiv1.CodeStart, st.StartError, true)
	case st.ExitCode != 0 || st.Signal != "":
		msg, retryable := gangExit(r.rs.plan.Tasks[i].Train, st)
		c.attemptFailed(r, i, apiv1.CodeExit, msg, !retryable)
	case st.OutputError != "":
		c.attemptFailed(r, i, apiv1.CodeOutput, st.OutputError, false)
	default:
		c.attemptSucceeded(r, i, st.Outputs)
	}
}

func exitMessage(st *job.Status) string {
	if st.Signal != "" {
		return "the process was killed by signal " + st.Signal
	}
	return fmt.Sprintf("the process exited with code %d", st.ExitCode)
}

// endAttempt takes node i out of the active set and gives back its resources.
func (c *Controller) endAttempt(r *round, i int, phase apiv1.Phase, code apiv1.Code, msg string) {
	ns := r.rs.nodes[i]
	ns.attempt.Phase, ns.attempt.Code, ns.attempt.Message = phase, code, msg
	if ns.attempt.FinishedAt == nil {
		ns.attempt.FinishedAt = r.timePtr()
	}
	r.setAttempt(i)
	r.ended = append(r.ended, ended{attemptID(r.rs.run.ID, ns.status.Name, ns.attempt.Number), phase == apiv1.PhaseSucceeded})
	delete(r.rs.active, i)
	ns.spec, ns.stop = nil, ""
	c.cfg.Pool.Release(r.rs.plan.Tasks[i].Request)
	r.release = true
}

func (c *Controller) attemptSucceeded(r *round, i int, outputs map[string]string) {
	rs := r.rs
	c.endAttempt(r, i, apiv1.PhaseSucceeded, "", "")
	rs.nodes[i].status.Outputs = outputs
	r.setNode(i, apiv1.PhaseSucceeded, "Succeeded", "", "")
	for _, d := range rs.plan.Graph.Downstream(i) {
		if rs.pendingUp[d]--; rs.pendingUp[d] > 0 {
			continue
		}
		if rs.stopping != "" {
			c.skip(r, d, rs.stopMsg)
			continue
		}
		rs.ready.PushBack(d)
	}
}

func (c *Controller) attemptCancelled(r *round, i int) {
	c.endAttempt(r, i, apiv1.PhaseCancelled, apiv1.CodeCancelled, "stopped on request")
	r.setNode(i, apiv1.PhaseCancelled, "Cancelled", apiv1.CodeCancelled, "stopped on request")
}

// attemptFailed ends node i's attempt as failed and either schedules a
// retry or fails the node. A permanent failure is never retried.
func (c *Controller) attemptFailed(r *round, i int, code apiv1.Code, msg string, permanent bool) {
	rs := r.rs
	c.endAttempt(r, i, apiv1.PhaseFailed, code, msg)
	ns := rs.nodes[i]
	retry := rs.plan.Tasks[i].Retry
	ns.failures++
	if !permanent && rs.stopping == "" && ns.failures <= retry.Limit {
		at := r.now.Add(retry.Delay(ns.attempt.Number + 1))
		ns.status.RetryAt = &at
		rs.retrying[i] = true
		r.setNode(i, apiv1.PhaseRetrying, "BackingOff", code,
			fmt.Sprintf("attempt %d failed: %s; attempt %d starts at %s", ns.attempt.Number, msg, ns.attempt.Number+1, at.Format("15:04:05.000")))
		return
	}
	c.failNode(r, i, code, msg)
}

// failNode fails node i for good: its descendants can never run, and with
// failFast the run stops starting anything.
func (c *Controller) failNode(r *round, i int, code apiv1.Code, msg string) {
	r.setNode(i, apiv1.PhaseFailed, "Failed", code, msg)
	c.skipDescendants(r, i)
	if r.rs.plan.FailFast && r.rs.stopping == "" {
		c.stopRun(r, apiv1.PhaseFailing, code, fmt.Sprintf("task %s failed", r.rs.nodes[i].status.Name))
	}
}

// skipDescendants ends every node downstream of i: they can never run.
func (c *Controller) skipDescendants(r *round, i int) {
	stack := append([]int(nil), r.rs.plan.Graph.Downstream(i)...)
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ns := r.rs.nodes[d]
		if ns.status.Phase.Done() {
			continue
		}
		r.setNode(d, apiv1.PhaseSkipped, "UpstreamFailed", apiv1.CodeUpstreamFailed,
			fmt.Sprintf("not started: upstream task %s failed", r.rs.nodes[i].status.Name))
		stack = append(stack, r.rs.plan.Graph.Downstream(d)...)
	}
}
