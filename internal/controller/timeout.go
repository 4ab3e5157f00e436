package controller

import "time"

// launched is when the backend had started attempt number of a node.
type launched struct {
	number int
	at     time.Time
}

// deadline is when something that began at start and may last d must
// end; zero when there is no limit or it has not begun.
func deadline(start time.Time, d time.Duration) time.Time {
	if d <= 0 || start.IsZero() {
		return time.Time{}
	}
	return start.Add(d)
}

// expired reports whether deadline d has passed at now; a zero deadline
// never does.
func expired(d, now time.Time) bool {
	return !d.IsZero() && !now.Before(d)
}

// startOf is the time behind t, zero when t is nil.
func startOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// attemptDeadline is when node i's running attempt exceeds its task's
// timeout: counted from when its processes started, as far as this engine
// saw it (the launch returned), not from when the engine decided to start
// it, so that a launch slowed by load does not eat the attempt's time.
// An attempt adopted from an earlier engine counts from its record.
func (rs *runState) attemptDeadline(i int) time.Time {
	ns := rs.nodes[i]
	start := startOf(ns.attempt.StartedAt)
	if l := ns.launched.Load(); l != nil && l.number == ns.attempt.Number && l.at.After(start) {
		start = l.at
	}
	return deadline(start, rs.plan.Tasks[i].Timeout)
}

// runDeadline is when the run exceeds its timeout: its start, plus the
// timeout, plus the time it spent suspended. Zero while it is suspended
// (the clock is stopped), before it starts, or without a timeout.
func (rs *runState) runDeadline() time.Time {
	st := &rs.run.Status
	if rs.plan.Timeout <= 0 || st.StartedAt == nil || (st.Suspended != nil && st.Suspended.Since != nil) {
		return time.Time{}
	}
	return st.StartedAt.Add(rs.plan.Timeout + st.Suspended.Spent(*st.StartedAt)) // Since is nil: the total alone
}
