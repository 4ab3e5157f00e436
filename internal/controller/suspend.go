package controller

import (
	"context"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/who"
)

// suspension stops the run's running nodes that suspend (training jobs,
// which start again on resume) while it is suspended and parks its ready
// nodes of every kind, so that nothing new starts; it makes them ready
// again once the run no longer is. Running nodes of other kinds finish,
// as Argo's suspend lets running pods finish.
func (r *round) suspension() {
	rs := r.rs
	if rs.stopping != "" {
		if !r.suspend {
			r.resume() // exit handlers parked while the failing run was suspended
		}
		return
	}
	logSuspension(r)
	if r.suspend && !rs.stopLate {
		for i := range rs.active {
			if rs.kinds[i].suspends {
				r.stopAttempt(i, apiv1.CodeSuspended)
			}
		}
		for _, i := range rs.ready.nodes() {
			rs.ready.remove(i)
			r.suspendNode(i, "suspended before it started")
		}
		return
	}
	r.resume()
}

// resume makes the run's parked nodes ready again.
func (r *round) resume() {
	rs := r.rs
	for i := range rs.suspended {
		delete(rs.suspended, i)
		r.setNode(i, apiv1.PhasePending, "Resumed", "", "unsuspended; waiting to be admitted")
		rs.nodes[i].waiting = false
		rs.enqueue(i)
	}
}

// logSuspension records, once, that the engine took a request to suspend
// or to resume the run (the store recorded the request and who asked),
// and when: the run's timeout does not count the time between.
func logSuspension(r *round) {
	rs := r.rs
	clockSuspension(r)
	if r.suspend == rs.suspendLog {
		return
	}
	rs.suspendLog = r.suspend
	reason, msg := "SuspendStarted", "suspended: nothing new starts, running training jobs stop, other running tasks finish"
	if !r.suspend {
		reason, msg = "SuspendEnded", "unsuspended: what was suspended starts again"
	}
	r.events = append(r.events, apiv1.Event{Phase: rs.run.Status.Phase, Reason: reason, Message: msg, Time: r.now})
}

// clockSuspension starts the run's suspension clock when it is suspended
// (a TrainJob submitted suspended included) and stops it, adding the
// time to the total, when it is not.
func clockSuspension(r *round) {
	st := &r.rs.run.Status
	running := st.Suspended != nil && st.Suspended.Since != nil
	switch {
	case r.suspend && !running:
		if st.Suspended == nil {
			st.Suspended = &apiv1.SuspendedTime{}
		}
		st.Suspended.Since = r.timePtr()
	case !r.suspend && running:
		d := r.now.Sub(*st.Suspended.Since)
		st.Suspended.Seconds += d.Seconds()
		st.Suspended.Since = nil
		r.shiftWaits(d)
	default:
		return
	}
	r.runDirty = true
}

// endSuspension stops the suspension clock of a run that ends while
// suspended, and says so: an ended run is not suspended, and a retry of
// it runs.
func (r *round) endSuspension() {
	st := &r.rs.run.Status
	if st.Suspended == nil || st.Suspended.Since == nil {
		return
	}
	st.Suspended.Seconds += r.now.Sub(*st.Suspended.Since).Seconds()
	st.Suspended.Since = nil
	r.runDirty = true
	r.events = append(r.events, apiv1.Event{
		Phase: st.Phase, Reason: "SuspendEnded", Time: r.now,
		Message: "the run ended while suspended: its suspension ends with it (kiln retry runs it, unsuspended)",
	})
}

// shiftWaits moves the clocks of the run's waiting nodes (gates,
// sensors) by d, the time the run was suspended: their timeouts and
// sleeps do not count it, as the run's own timeout does not.
func (r *round) shiftWaits(d time.Duration) {
	for i := range r.rs.gates {
		st := r.rs.nodes[i].status.Gate
		for _, t := range []**time.Time{&st.WaitingSince, &st.WakeAt, &st.SleepUntil, &st.NextLook} {
			if *t != nil {
				moved := (*t).Add(d)
				*t = &moved
			}
		}
		r.nodes[i] = true
	}
}

// showSuspended shows the run Suspended while nothing of it runs, waits
// to retry or is ready, and some of it is suspended; and as it was once
// something is again.
func (r *round) showSuspended() {
	rs := r.rs
	if rs.stopping != "" || rs.run.Status.Phase.Done() {
		return
	}
	idle := len(rs.active) == 0 && len(rs.retrying) == 0 && rs.ready.Len() == 0
	switch {
	case idle && len(rs.suspended) > 0:
		r.setRun(apiv1.PhaseSuspended, "Suspended", "",
			fmt.Sprintf("%d of its tasks suspended and nothing else can run; kiln unsuspend %s resumes them", len(rs.suspended), rs.run.ID))
	case !idle && rs.run.Status.Phase == apiv1.PhaseSuspended && rs.run.Status.StartedAt == nil:
		r.setRun(apiv1.PhasePending, "Unsuspended", "", "") // nothing started yet: it waits for room
	case !idle && rs.run.Status.Phase == apiv1.PhaseSuspended:
		r.setRun(apiv1.PhaseRunning, "Unsuspended", "", "")
	}
}

// suspendNode parks node i until the run is unsuspended.
func (r *round) suspendNode(i int, msg string) {
	r.rs.nodes[i].waiting = false
	r.rs.suspended[i] = true
	r.setNode(i, apiv1.PhaseSuspended, "Suspended", "", msg)
}

// Suspend records in the store whether run id's training jobs should be
// suspended, and acts on it at once if this engine owns the run. A run
// that has ended cannot be suspended or unsuspended: KLN-4010.
func (rt *Runs) Suspend(ctx context.Context, id apiv1.RunID, suspend bool) error {
	verb := map[bool]string{true: "suspended", false: "unsuspended"}[suspend]
	if err := rt.cfg.Store.RequestSuspend(ctx, id, suspend, who.Asks(ctx)); err != nil {
		return runError(id, err, "only a run that has not ended can be "+verb)
	}
	rt.request(id, func(rs *runState) { rs.suspendReq = suspend })
	return nil
}
