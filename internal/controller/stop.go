package controller

import (
	"cmp"
	"fmt"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// payOwedStops stops again the attempts that the run's previous engine was
// stopping when it went away: a cancel cut short by a second Ctrl-C or a
// kill -9 still ends as a cancel. Abort is idempotent.
func (r *round) payOwedStops() {
	for _, i := range r.rs.owed {
		if r.rs.active[i] {
			r.abort = append(r.abort, i)
		}
	}
	r.rs.owed = nil
}

// stopIfNeeded starts cancelling or failing the run when asked to or when
// its deadline passed. A stop ends the run as a failure whose exit
// handlers run (argo stop); a cancel ends it at once (argo terminate),
// and wins over a stop under way.
func (r *round) stopIfNeeded(asked requests) {
	rs := r.rs
	switch {
	case rs.stopping == apiv1.PhaseCancelling:
		return
	case asked.cancel:
		r.stopRun(apiv1.PhaseCancelling, apiv1.CodeCancelled, "cancelled on request")
	case asked.stop && rs.stopCode != apiv1.CodeStopped && rs.exitBegun():
		r.stopLate()
	case asked.stop && rs.stopCode != apiv1.CodeStopped:
		r.stopRun(apiv1.PhaseFailing, apiv1.CodeStopped, "stopped on request")
	case expired(rs.runDeadline(), r.now) && rs.stopping == "":
		r.stopRun(apiv1.PhaseFailing, apiv1.CodeRunTimeout, fmt.Sprintf("the run exceeded its %s of %s", cmp.Or(rs.plan.TimeoutName, "timeout"), rs.plan.Timeout))
	}
}

// exitBegun reports whether the run's main tasks have all ended and its
// exit handler has begun: its outcome, which the handler reads, is
// decided.
func (rs *runState) exitBegun() bool {
	i, ok := rs.plan.Index[workflow.ExitNode]
	return ok && rs.nodes[i].status.Phase != apiv1.PhasePending
}

// stopLate takes a stop that came once the run's tasks had all ended: a
// stop ends the run's tasks and runs its exit handler, and only the exit
// handler is left, so the run's outcome, which the handler saw, stands.
// The handler runs on, and starts even while the run is suspended.
func (r *round) stopLate() {
	rs := r.rs
	if rs.stopLate {
		return
	}
	rs.stopLate = true
	r.events = append(r.events, apiv1.Event{
		Phase: rs.run.Status.Phase, Reason: "StopAfterTasks", Time: r.now,
		Message: "the stop came after the run's tasks had ended: its exit handler runs on, and the run ends as its tasks did",
	})
	r.resume()
}

// stopRun stops the run: nothing new starts and, when cancelling,
// stopping on request (but the exit handler) or on a timeout, running
// attempts are stopped too.
func (r *round) stopRun(phase apiv1.Phase, code apiv1.Code, msg string) {
	rs := r.rs
	rs.stopping, rs.stopCode, rs.stopMsg = phase, code, msg
	r.setRun(phase, string(phase), code, msg)
	if code == apiv1.CodeCancelled || code == apiv1.CodeRunTimeout || code == apiv1.CodeStopped {
		for i := range rs.active {
			if code == apiv1.CodeStopped && rs.inExitHandler(i) {
				continue // a stop runs the exit handler, one already running included
			}
			r.stopAttempt(i, code)
		}
	}
	r.skipUnstarted(msg)
}

// stopAttempt asks the backend, after the commit, to stop node i's attempt.
func (r *round) stopAttempt(i int, why apiv1.Code) {
	ns := r.rs.nodes[i]
	if ns.stop == "" {
		ns.stop = why
		r.abort = append(r.abort, i)
	}
}

// skipUnstarted ends every node that has not started and never will:
// the run is stopping. A failing run keeps the nodes that run on failure.
func (r *round) skipUnstarted(msg string) {
	rs := r.rs
	keep := func(i int) bool { return rs.stopping != apiv1.PhaseCancelling && rs.runsOnFailure(i) }
	for _, i := range rs.ready.nodes() {
		if !keep(i) {
			r.skipNode(i, "", "not started: "+msg)
		}
	}
	for i := range rs.cacheWait {
		if !keep(i) {
			delete(rs.cacheWait, i)
			r.skipNode(i, "", "not started: "+msg)
		}
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
		if (ns.status.Phase == apiv1.PhasePending || ns.status.Phase == apiv1.PhaseWaiting) && !keep(i) {
			r.skipStopped(i, msg)
		}
	}
}

// skipStopped skips node i, which the stopping run will not start: for
// a failed upstream task when there is one (the closer reason), else for
// the stop.
func (r *round) skipStopped(i int, msg string) {
	if ns := r.rs.nodes[i]; ns.attempt.Number > 0 { // it ran, and waited to run again
		r.rs.ready.remove(i)
		if r.rs.part != nil {
			delete(r.rs.part.held, i)
		}
		if r.rs.stopping == apiv1.PhaseCancelling {
			r.setNode(i, apiv1.PhaseCancelled, "Cancelled", apiv1.CodeCancelled, "not run again: "+msg)
			return
		}
		r.setNode(i, apiv1.PhaseFailed, "NotRetried", ns.attempt.Code, ns.attempt.Message+"; not run again: "+msg)
		return
	}
	if _, final, code, why := r.rs.trigger(i); final && code == apiv1.CodeUpstreamFailed {
		r.skipNode(i, code, why)
		return
	}
	r.skipNode(i, "", "not started: "+msg)
}

// timeouts stops attempts that ran past their node's timeout, and fails
// nodes that waited for room past their admission timeout.
func (r *round) timeouts() {
	rs := r.rs
	for i := range rs.active {
		if expired(rs.attemptDeadline(i), r.now) {
			r.stopAttempt(i, apiv1.CodeAttemptTimeout)
		}
	}
	for i := range rs.queued {
		t := &rs.plan.Tasks[i]
		if !expired(deadline(rs.nodes[i].waitingSince, t.AdmissionTimeout), r.now) {
			continue
		}
		rs.ready.remove(i)
		r.failNode(i, apiv1.CodeScheduleTimeout, fmt.Sprintf("could not be admitted whole within its admission timeout of %s; it was %s",
			t.AdmissionTimeout, rs.nodes[i].status.Message))
	}
}

// retriesDue makes nodes whose backoff has elapsed ready again, ahead of
// their equals.
func (r *round) retriesDue() {
	rs := r.rs
	for i := range rs.retrying {
		ns := rs.nodes[i]
		if ns.status.RetryAt == nil || !r.now.Before(*ns.status.RetryAt) {
			delete(rs.retrying, i)
			ns.status.RetryAt = nil
			ns.waiting = false
			rs.ready.pushFront(i, rs.plan.Tasks[i].Spec.Priority)
			rs.fresh = append(rs.fresh, i)
		}
	}
}

func joinNames(names []string) string { return strings.Join(names, ", ") }
