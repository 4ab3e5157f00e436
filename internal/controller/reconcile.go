package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	rs := c.runs.get(id)
	if rs == nil {
		return Result{}, nil // not ours, or already finished
	}
	r := newRound(rs, now())
	r.wakes = c.admission.room.seq()
	dirty, asked := rs.takeWork()
	r.suspend = asked.suspend
	r.payOwedStops()
	observeErr := c.observe(ctx, r, dirty)
	c.reports.read(ctx, r)
	r.stopIfNeeded(asked)
	r.suspension()
	r.timeouts()
	r.preemptions()
	gateErr := errors.Join(c.waits.decide(ctx, r), c.parts.read(ctx, r))
	r.retriesDue()
	c.results.cacheWaits(ctx, r)
	admitErr := c.settleAndAdmit(ctx, r)
	admitErr = errors.Join(admitErr, c.admission.grow(ctx, r))
	r.showSuspended()
	c.finishIfDone(r)
	kept, err := c.commit(ctx, r)
	if err != nil || !kept {
		return Result{}, err
	}
	sideErr := c.sideEffects(ctx, r)
	c.admission.quota.noteRun(rs)
	rs.running.Store(int64(len(rs.active)))
	rs.backingOff.Store(int64(len(rs.retrying)))
	rs.parked.Store(int64(len(rs.suspended)))
	if rs.run.Status.Phase.Done() {
		c.forget(rs)
		return Result{}, nil
	}
	return Result{RequeueAfter: c.nextWake(rs)}, errors.Join(observeErr, gateErr, admitErr, sideErr)
}

// settleAndAdmit carries out what the round's ends mean and admits the
// nodes that became ready; an attempt that cannot even start ends at
// once, so this goes on while admitting changes more (a few times at
// most: what is left waits for the next round, which the ready nodes ask for).
func (c *Controller) settleAndAdmit(ctx context.Context, r *round) error {
	if c.admission.quota.runsQuotaHolds(r) { // it stays Pending: nothing of it is decided yet
		return nil
	}
	defer c.admission.quota.releaseRunSlot(r.rs)
	var errs []error
	for range 4 {
		c.settle(ctx, r)
		errs = append(errs, c.admission.admit(ctx, r))
		if len(r.doneQ) == 0 && len(r.rs.unresolved) == 0 && len(r.expandQ) == 0 && len(r.touched) == 0 {
			break
		}
	}
	c.settle(ctx, r)
	return errors.Join(errs...)
}

// commit writes the round. It reports false, and drops the run, if
// another engine took the run over.
func (c *Controller) commit(ctx context.Context, r *round) (bool, error) {
	ch := r.change(c.cfg.Owner)
	ch.Term = c.lead.Term()
	outage, hadOutage := c.outages.event(r.rs.run.ID, r.rs.run.Status.Phase, r.now)
	if hadOutage {
		ch.Events = append(ch.Events, outage)
	}
	if ch.Empty() {
		return true, nil
	}
	err := c.cfg.Store.Apply(ctx, ch)
	if err == nil {
		if hadOutage {
			c.outages.recorded(r.rs.run.ID)
		}
		logEnd(c.log, r)
		c.tally(r)
		c.runs.changed()
		return true, nil
	}
	c.outages.unsaved(r.rs.run.ID, err)
	// The round's changes exist only in memory: room admitted for
	// attempts that will not start goes back.
	relErr := c.cfg.Pool.Release(ctx, r.admitted...)
	if c.lead.wasFenced(err) {
		c.forget(r.rs)
		return false, nil
	}
	if errors.Is(err, store.ErrLeaseLost) {
		c.log.Warn("lost the run to another engine", "run", r.rs.run.ID)
		c.forget(r.rs)
		return false, nil
	}
	return false, errors.Join(fmt.Errorf("saving run %s: %w", r.rs.run.ID, err), relErr, c.reload(ctx, r.rs))
}

// finishIfDone ends the run once nothing runs and nothing more can start.
func (c *Controller) finishIfDone(r *round) {
	rs := r.rs
	if len(rs.active) > 0 || len(rs.retrying) > 0 || rs.ready.Len() > 0 || len(rs.suspended) > 0 ||
		len(rs.gates) > 0 || len(rs.groups) > 0 {
		return
	}
	if rs.finished < len(rs.nodes) && rs.stopping == "" {
		return // waiting on nodes that are neither ready nor blocked: cannot happen in a DAG
	}
	r.skipLeftovers()
	r.endSuspension()
	switch {
	case rs.stopping == apiv1.PhaseCancelling:
		r.setRun(apiv1.PhaseCancelled, "Cancelled", apiv1.CodeCancelled, rs.stopMsg)
	case rs.stopCode == apiv1.CodeRunTimeout, rs.stopCode == apiv1.CodeStopped:
		r.setRun(apiv1.PhaseFailed, failReason(rs.stopCode), rs.stopCode, rs.stopMsg)
	case len(rs.failed) > 0:
		r.setRun(apiv1.PhaseFailed, failReason(rs.failedCode()), rs.failedCode(), rs.failedMessage())
	default:
		r.runOutputs(&c.cfg)
		r.setRun(apiv1.PhaseSucceeded, "Succeeded", "", rs.succeededMessage())
	}
}

// skipLeftovers skips what a stopped run never reached.
func (r *round) skipLeftovers() {
	for i, ns := range r.rs.nodes {
		if !ns.status.Phase.Done() {
			r.skipNode(i, "", "not started: "+r.rs.stopMsg)
		}
	}
	r.skipUnbuilt()
}

// skipUnbuilt ends, Skipped, the stored children of groups that did not
// expand again in this try of the run (a retried map that was cancelled
// before it started): no engine will build them now, and a finished run
// holds no node that has not ended.
func (r *round) skipUnbuilt() {
	rs := r.rs
	ks := slices.Sorted(maps.Values(rs.stored))
	for _, k := range ks {
		n := rs.run.Status.Nodes[k]
		if n.Phase.Done() {
			continue
		}
		if n.Children == nil {
			rs.progress.Move(n.Phase, apiv1.PhaseSkipped)
		}
		msg := fmt.Sprintf("not started: task %s ended without running its children in this try of the run", n.Parent)
		n.Phase, n.Code, n.Message, n.FinishedAt = apiv1.PhaseSkipped, "", msg, r.timePtr()
		n.Attempts, n.Expansion = nil, nil
		rs.run.Status.Nodes[k] = n
		r.unbuilt = append(r.unbuilt, n)
		r.events = append(r.events, apiv1.Event{Node: n.Name, Phase: n.Phase, Reason: "Skipped", Message: msg, Time: r.now})
	}
}

// succeededMessage counts the tasks at the top of a run that succeeded.
func (rs *runState) succeededMessage() string {
	var ok, skipped, cached, reused int
	for i, ns := range rs.nodes {
		if cs := ns.status.Cache; cs != nil && cs.Result == apiv1.CacheHit && ns.status.Phase == apiv1.PhaseSucceeded {
			cached++ // a map's items too
		}
		switch {
		case rs.parent[i] >= 0:
		case ns.status.Phase == apiv1.PhaseSucceeded:
			ok++
			if ns.status.Reused != nil {
				reused++
			}
		case ns.status.Phase == apiv1.PhaseSkipped:
			skipped++
		}
	}
	msg := fmt.Sprintf("%d %s succeeded", ok, plural(ok, "task"))
	var from []string
	if reused > 0 {
		from = append(from, fmt.Sprintf("%d reused", reused))
	}
	if cached > 0 {
		from = append(from, fmt.Sprintf("%d %s from the cache", cached, plural(cached, "result")))
	}
	if len(from) > 0 {
		msg += " (" + strings.Join(from, ", ") + ")"
	}
	if skipped > 0 {
		msg += fmt.Sprintf(", %d skipped", skipped)
	}
	return msg
}

func (rs *runState) failedCode() apiv1.Code {
	return rs.nodes[rs.plan.Index[rs.failed[0]]].status.Code
}

func (rs *runState) failedMessage() string {
	first := rs.nodes[rs.plan.Index[rs.failed[0]]].status
	msg := fmt.Sprintf("task %s failed: %s", first.Name, first.Message)
	if len(rs.failed) > 1 {
		msg += fmt.Sprintf(" (%d tasks failed: %s)", len(rs.failed), joinNames(rs.failed))
	}
	return msg
}

// nextWake returns when the run must be looked at again without an
// event: the next retry, attempt deadline, admission deadline or run
// deadline.
func (c *Controller) nextWake(rs *runState) time.Duration {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for i := range rs.retrying {
		consider(startOf(rs.nodes[i].status.RetryAt))
	}
	for i := range rs.active {
		if ns := rs.nodes[i]; ns.stop == "" {
			consider(rs.attemptDeadline(i))
		}
	}
	for i := range rs.queued {
		consider(deadline(rs.nodes[i].waitingSince, rs.plan.Tasks[i].AdmissionTimeout))
	}
	if rs.stopping == "" {
		consider(rs.runDeadline())
	}
	rs.gateWake(consider, now())
	if len(rs.cacheWait) > 0 {
		consider(now().Add(cachePoll))
	}
	c.reports.wake(rs, consider)
	c.admission.growWake(rs, consider)
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
	fresh, err := newRunState(run, old.compiled, c.cfg.Handlers, now())
	if err != nil {
		return err
	}
	if err := c.restore(ctx, fresh); err != nil {
		return err
	}
	fresh.done = old.done
	return c.runs.track(ctx, fresh)
}

// plural is word, with an s unless n is 1 ("child": children).
func plural(n int, word string) string {
	switch {
	case n == 1:
		return word
	case word == "child":
		return "children"
	}
	return word + "s"
}
