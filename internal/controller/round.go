package controller

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// round collects what one reconcile of a run changes: it is written to the
// store in one transaction, and only then are the side effects (launches,
// aborts) done.
type round struct {
	rs       *runState
	now      time.Time
	nodes    map[int]bool // nodes whose row changed
	attempts map[int]bool // nodes whose current attempt changed
	events   []apiv1.Event
	runDirty bool
	queue    *admissionQueue
	suspend  bool // training jobs must not run

	launch  []int   // nodes to launch after the commit
	abort   []int   // nodes to stop after the commit
	ended   []ended // attempts to release after the commit
	release bool    // resources went back to the pool
	starved bool    // a ready node did not fit in the pool
}

// ended is an attempt whose end a round records.
type ended struct {
	id        string
	succeeded bool
}

func newRound(rs *runState, now time.Time) *round {
	return &round{rs: rs, now: now, nodes: map[int]bool{}, attempts: map[int]bool{}}
}

// setNode moves node i to phase with a code and message, and records the event.
func (r *round) setNode(i int, phase apiv1.Phase, reason string, code apiv1.Code, msg string) {
	ns := r.rs.nodes[i]
	was := ns.status.Phase
	if was == apiv1.PhaseWaiting && phase != apiv1.PhaseWaiting {
		r.queue.done(r.rs.run.ID, i)
		r.release = true // what it held back may start now
	}
	ns.status.Phase, ns.status.Code, ns.status.Message = phase, code, msg
	if phase.Done() && !was.Done() {
		r.rs.finished++
		ns.status.FinishedAt = r.timePtr()
		if phase == apiv1.PhaseFailed {
			r.rs.failed = append(r.rs.failed, ns.status.Name)
		}
	}
	if r.rs.plan.Tasks[i].Train != nil {
		trainConditions(&ns.status, phase, reason, msg, r.now)
	}
	r.nodes[i] = true
	r.events = append(r.events, apiv1.Event{
		Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: phase,
		Reason: reason, Code: code, Message: msg, Time: r.now,
	})
}

// setAttempt records a change of node i's current attempt.
func (r *round) setAttempt(i int) { r.attempts[i] = true }

// setRun moves the run to phase.
func (r *round) setRun(phase apiv1.Phase, reason string, code apiv1.Code, msg string) {
	st := &r.rs.run.Status
	if st.Phase == phase && st.Message == msg {
		return
	}
	st.Phase, st.Code, st.Message = phase, code, msg
	if phase.Done() {
		st.FinishedAt = r.timePtr()
	}
	r.runDirty = true
	r.events = append(r.events, apiv1.Event{Phase: phase, Reason: reason, Code: code, Message: msg, Time: r.now})
}

func (r *round) timePtr() *time.Time {
	t := r.now
	return &t
}

// change is what the round writes to the store.
func (r *round) change(owner string) *store.Change {
	c := &store.Change{Run: r.rs.run.ID, Owner: owner, Events: r.events}
	if r.runDirty {
		st := r.rs.run.Status
		st.Nodes = nil
		c.Status = &st
	}
	for i := range r.nodes {
		c.Nodes = append(c.Nodes, r.rs.nodes[i].status)
	}
	for i := range r.attempts {
		ns := r.rs.nodes[i]
		c.Attempts = append(c.Attempts, store.AttemptRow{Node: ns.status.Name, AttemptStatus: ns.attempt})
	}
	return c
}
