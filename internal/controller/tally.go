package controller

import "time"

// tally tells the metrics what a saved round changed: each change is
// counted once, by the engine whose round recorded it, and never for a
// round the store refused.
func (c *Controller) tally(r *round) {
	m, rs := c.cfg.Metrics, r.rs
	st := &rs.run.Status
	if r.runBegan && st.StartedAt != nil && rs.firstTry() {
		m.RunStarted(st.StartedAt.Sub(rs.run.CreatedAt))
	}
	for _, i := range r.began {
		if f := rs.kinds[i].framework; f != "" {
			ns := rs.nodes[i]
			m.JobStarted(f, ns.attempt.Number > ns.status.AttemptBase+1)
		}
	}
	for _, i := range r.finished {
		phase := rs.nodes[i].status.Phase
		m.TaskEnded(phase)
		if f := rs.kinds[i].framework; f != "" {
			m.JobEnded(f, phase)
		}
	}
	for _, n := range r.unbuilt {
		m.TaskEnded(n.Phase)
	}
	if r.runEnded && st.Phase.Done() && st.FinishedAt != nil {
		m.RunEnded(st.Phase, st.FinishedAt.Sub(runClock(rs)))
	}
}

// firstTry reports whether no node of the run has attempts from an
// earlier try (kiln retry, rerun): the wait from its submission to its
// first start is then its queue wait.
func (rs *runState) firstTry() bool {
	for _, ns := range rs.nodes {
		if ns.status.AttemptBase > 0 {
			return false
		}
	}
	return true
}

// runClock is when a run's duration counts from: its start, or its
// submission when it ended before any task started.
func runClock(rs *runState) time.Time {
	if s := rs.run.Status.StartedAt; s != nil {
		return *s
	}
	return rs.run.CreatedAt
}
