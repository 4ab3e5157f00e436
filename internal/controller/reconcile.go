package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// Result tells the worker when to look at a run again without an event.
type Result struct {
	RequeueAfter time.Duration
}

// Reconcile moves one run a step closer to done. It can be called any
// number of times: it observes the attempts that reported, decides what
// comes next, writes all of it to the store in one transaction, and only
// then launches and stops attempts.
//
// A returned error means the engine could not do its work (the store or
// the backend failed) and the run is retried with backoff. A task that
// fails is not an error here: it is recorded in the run's status.
func (c *Controller) Reconcile(ctx context.Context, id apiv1.RunID) (Result, error) {
	rs := c.lookup(id)
	if rs == nil {
		return Result{}, nil // not ours, or already finished
	}
	r := newRound(rs, c.now())
	r.queue = c.admitted
	dirty, cancel, suspend := rs.takeWork()
	r.suspend = suspend
	observeErr := c.observe(ctx, r, dirty)
	c.stopIfNeeded(r, cancel)
	c.suspension(r)
	c.timeouts(r)
	c.retriesDue(r)
	c.admit(ctx, r)
	c.finishIfDone(r)
	kept, err := c.commit(ctx, r)
	if err != nil || !kept {
		return Result{}, err
	}
	sideErr := c.sideEffects(ctx, r)
	rs.running.Store(int64(len(rs.active)))
	rs.backingOff.Store(int64(len(rs.retrying)))
	rs.parked.Store(int64(len(rs.suspended)))
	if rs.run.Status.Phase.Done() {
		c.forget(rs)
		return Result{}, nil
	}
	return Result{RequeueAfter: c.nextWake(rs)}, errors.Join(observeErr, sideErr)
}

// commit writes the round. It reports false, and drops the run, if
// another engine took the run over.
func (c *Controller) commit(ctx context.Context, r *round) (bool, error) {
	ch := r.change(c.cfg.Owner)
	if ch.Empty() {
		return true, nil
	}
	err := c.cfg.Store.Apply(ctx, ch)
	if errors.Is(err, store.ErrLeaseLost) {
		c.log.Warn("lost the run to another engine", "run", r.rs.run.ID)
		c.forget(r.rs)
		return false, nil
	}
	if err != nil {
		// The round's changes exist only in memory now: start again from
		// what the store holds.
		return false, errors.Join(fmt.Errorf("saving run %s: %w", r.rs.run.ID, err), c.reload(ctx, r.rs))
	}
	c.notify(r.rs)
	return true, nil
}

// stopIfNeeded starts cancelling or failing the run when asked to or when
// its deadline passed.
func (c *Controller) stopIfNeeded(r *round, cancel bool) {
	rs := r.rs
	switch {
	case rs.stopping == apiv1.PhaseCancelling:
		return
	case cancel:
		c.stopRun(r, apiv1.PhaseCancelling, apiv1.CodeCancelled, "cancelled on request")
	case !rs.deadline.IsZero() && !r.now.Before(rs.deadline) && rs.stopping == "":
		c.stopRun(r, apiv1.PhaseFailing, apiv1.CodeRunTimeout, fmt.Sprintf("the run exceeded its timeout of %s", rs.plan.Timeout))
	}
}

// stopRun stops the run: nothing new starts and, when cancelling or on a
// timeout, running attempts are stopped too.
func (c *Controller) stopRun(r *round, phase apiv1.Phase, code apiv1.Code, msg string) {
	rs := r.rs
	rs.stopping, rs.stopCode, rs.stopMsg = phase, code, msg
	r.setRun(phase, string(phase), code, msg)
	if code == apiv1.CodeCancelled || code == apiv1.CodeRunTimeout {
		for i := range rs.active {
			c.stopAttempt(r, i, code)
		}
	}
	c.skipUnstarted(r, msg)
}

// stopAttempt asks the backend, after the commit, to stop node i's attempt.
func (c *Controller) stopAttempt(r *round, i int, why apiv1.Code) {
	ns := r.rs.nodes[i]
	if ns.stop == "" {
		ns.stop = why
		r.abort = append(r.abort, i)
	}
}

// skipUnstarted ends every node that has not started: the run is stopping.
func (c *Controller) skipUnstarted(r *round, msg string) {
	rs := r.rs
	for e := rs.ready.Front(); e != nil; e = rs.ready.Front() {
		rs.ready.Remove(e)
		c.skip(r, e.Value.(int), msg)
	}
	for i := range rs.retrying {
		delete(rs.retrying, i)
		ns := rs.nodes[i]
		if rs.stopping == apiv1.PhaseCancelling {
			r.setNode(i, apiv1.PhaseCancelled, "Cancelled", apiv1.CodeCancelled, "not retried: "+msg)
			continue
		}
		r.setNode(i, apiv1.PhaseFailed, "NotRetried", ns.attempt.Code, ns.attempt.Message+"; not retried: "+msg)
	}
	for i := range rs.suspended {
		delete(rs.suspended, i)
		r.setNode(i, apiv1.PhaseCancelled, "Cancelled", rs.stopCode, "suspended job not started again: "+msg)
	}
	for i, ns := range rs.nodes {
		if ns.status.Phase == apiv1.PhasePending || ns.status.Phase == apiv1.PhaseWaiting {
			c.skip(r, i, msg)
		}
	}
}

func (c *Controller) skip(r *round, i int, msg string) {
	delete(r.rs.queued, i)
	if ns := r.rs.nodes[i]; !ns.status.Phase.Done() {
		r.setNode(i, apiv1.PhaseSkipped, "Skipped", "", "not started: "+msg)
	}
}

// timeouts stops attempts that ran past their task's timeout.
func (c *Controller) timeouts(r *round) {
	for i := range r.rs.active {
		ns := r.rs.nodes[i]
		t := r.rs.plan.Tasks[i].Timeout
		if t > 0 && ns.attempt.StartedAt != nil && !r.now.Before(ns.attempt.StartedAt.Add(t)) {
			c.stopAttempt(r, i, apiv1.CodeAttemptTimeout)
		}
	}
}

// retriesDue makes nodes whose backoff has elapsed ready again.
func (c *Controller) retriesDue(r *round) {
	for i := range r.rs.retrying {
		ns := r.rs.nodes[i]
		if ns.status.RetryAt == nil || !r.now.Before(*ns.status.RetryAt) {
			delete(r.rs.retrying, i)
			ns.status.RetryAt = nil
			r.rs.ready.PushFront(i)
		}
	}
}

// finishIfDone ends the run once nothing runs and nothing more can start.
func (c *Controller) finishIfDone(r *round) {
	rs := r.rs
	if len(rs.active) > 0 || len(rs.retrying) > 0 || rs.ready.Len() > 0 || len(rs.suspended) > 0 {
		return
	}
	if rs.finished < len(rs.nodes) && rs.stopping == "" {
		return // waiting on nodes that are neither ready nor blocked: cannot happen in a DAG
	}
	switch {
	case rs.stopping == apiv1.PhaseCancelling:
		r.setRun(apiv1.PhaseCancelled, "Cancelled", apiv1.CodeCancelled, rs.stopMsg)
	case rs.stopCode == apiv1.CodeRunTimeout:
		r.setRun(apiv1.PhaseFailed, "Failed", rs.stopCode, rs.stopMsg)
	case len(rs.failed) > 0:
		r.setRun(apiv1.PhaseFailed, "Failed", rs.failedCode(), rs.failedMessage())
	default:
		r.setRun(apiv1.PhaseSucceeded, "Succeeded", "", fmt.Sprintf("%d tasks succeeded", len(rs.nodes)))
	}
}

func (rs *runState) failedCode() apiv1.Code {
	return rs.nodes[rs.plan.Index[rs.failed[0]]].status.Code
}

func (rs *runState) failedMessage() string {
	first := rs.nodes[rs.plan.Index[rs.failed[0]]].status
	msg := fmt.Sprintf("task %s failed: %s", first.Name, first.Message)
	if len(rs.failed) > 1 {
		msg += fmt.Sprintf(" (%d tasks failed: %s)", len(rs.failed), strings.Join(rs.failed, ", "))
	}
	return msg
}

// nextWake returns when the run must be looked at again without an
// event: the next retry, attempt deadline or run deadline.
func (c *Controller) nextWake(rs *runState) time.Duration {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for i := range rs.retrying {
		if at := rs.nodes[i].status.RetryAt; at != nil {
			consider(*at)
		}
	}
	for i := range rs.active {
		ns := rs.nodes[i]
		if t := rs.plan.Tasks[i].Timeout; t > 0 && ns.attempt.StartedAt != nil && ns.stop == "" {
			consider(ns.attempt.StartedAt.Add(t))
		}
	}
	for i := range rs.queued {
		consider(rs.nodes[i].waitingSince.Add(rs.plan.Tasks[i].Train.ScheduleTimeout))
	}
	if rs.stopping == "" {
		consider(rs.deadline)
	}
	if next.IsZero() {
		return 0
	}
	return max(time.Until(next), time.Millisecond)
}

// reload replaces the engine's copy of a run with what the store holds.
func (c *Controller) reload(ctx context.Context, old *runState) error {
	run, err := c.cfg.Store.GetRun(ctx, old.run.ID)
	if err != nil {
		return fmt.Errorf("reloading run %s: %w", old.run.ID, err)
	}
	for i := range old.active {
		c.cfg.Pool.Release(old.plan.Tasks[i].Request)
	}
	fresh := newRunState(run, old.plan)
	fresh.done = old.done
	c.track(fresh)
	return nil
}
