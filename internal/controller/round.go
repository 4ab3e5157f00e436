package controller

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// round collects what one reconcile of a run changes: it is written to the
// store in one transaction, and only then are the side effects (launches,
// aborts) done.
type round struct {
	rs       *runState
	now      time.Time
	nodes    map[int]bool                       // nodes whose row changed
	attempts map[attemptKey]apiv1.AttemptStatus // attempts that changed, as last set
	events   []apiv1.Event
	runDirty bool
	suspend  bool // nodes that suspend must not run

	launch       []int            // nodes to launch after the commit
	joins        []join           // hosts to start in running attempts after the commit
	shrink       []int            // running flexible gangs that lost a host: their room shrinks after the commit
	abort        []int            // nodes to stop after the commit
	ended        []ended          // attempts to release after the commit
	released     []string         // holders whose room goes back to the pool, before admission
	releasedRoom resource.Request // and how much room that is
	admitted     []string         // holders admitted in this round
	withdraw     []string         // waiters that stopped waiting without being admitted
	freed        bool             // room went back to the pool
	starved      bool             // a ready node did not fit in the pool
	granted      bool             // the pool holds room granted to this engine's nodes that no one asked for
	wakes        uint64           // the engine's wake count when the round began (see addStarved)

	doneQ    []int              // nodes that ended in this round, for settle
	expandQ  []int              // nodes whose own attempt succeeded and that now expand
	touched  map[int]bool       // groups whose children changed, to gather
	added    []int              // nodes made in this round (children), in order
	unbuilt  []apiv1.NodeStatus // stored children this try never built, ended with the run
	expanded map[int]bool       // nodes that expanded in this round: their expansion is written

	// What the metrics count once the round is saved (see tally).
	runBegan bool  // the run's first node started
	runEnded bool  // the run ended
	began    []int // nodes whose attempt started
	finished []int // nodes that ended
}

// attemptKey names attempt number of node node within a run.
type attemptKey struct{ node, number int }

// ended is an attempt whose end a round records.
type ended struct {
	id        job.AttemptID
	succeeded bool
}

func newRound(rs *runState, now time.Time) *round {
	return &round{
		rs: rs, now: now, nodes: map[int]bool{}, attempts: map[attemptKey]apiv1.AttemptStatus{},
		touched: map[int]bool{}, expanded: map[int]bool{},
	}
}

// setNode moves node i to phase with a code and message, and records the event.
func (r *round) setNode(i int, phase apiv1.Phase, reason string, code apiv1.Code, msg string) {
	ns := r.rs.nodes[i]
	was := ns.status.Phase
	if was == apiv1.PhaseWaiting && phase != apiv1.PhaseWaiting {
		delete(r.rs.queued, i)
		if phase != apiv1.PhaseRunning { // admitted nodes left the queue already
			r.withdraw = append(r.withdraw, r.rs.waiter(i))
		}
	}
	ns.status.Phase, ns.status.Code, ns.status.Message = phase, code, msg
	r.rs.moveProgress(i, was, phase)
	if p := r.rs.parent[i]; p >= 0 && r.rs.groups[p] != nil && was != phase {
		r.rs.groups[p].countChild(was, phase)
		r.touched[p] = true
	}
	if phase.Done() && !was.Done() {
		r.rs.finished++
		ns.status.FinishedAt = r.timePtr()
		if phase == apiv1.PhaseFailed && r.rs.parent[i] < 0 {
			r.rs.failed = append(r.rs.failed, ns.status.Name)
		}
		r.doneQ = append(r.doneQ, i)
		r.finished = append(r.finished, i)
	}
	r.report(i, node.Change{Phase: phase, Reason: reason, Message: msg})
	r.nodes[i] = true
	r.events = append(r.events, apiv1.Event{
		Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: phase,
		Reason: reason, Code: code, Message: msg, Time: r.now,
	})
}

// report tells node i's handler, if it reports, what changed.
func (r *round) report(i int, c node.Change) {
	if rep := r.rs.kinds[i].reporter; rep != nil {
		c.Time = r.now
		before := r.rs.nodes[i].status
		rep.Report(&r.rs.nodes[i].status, c)
		r.nodes[i] = true
		if c.Ended != nil {
			r.announce(i, &before)
		}
	}
}

// setAttempt records node i's current attempt as it stands. Each attempt
// a round touches is written as it last stood, so an attempt that ended
// keeps its final record even when its node's next attempt starts in the
// same round.
func (r *round) setAttempt(i int) {
	ns := r.rs.nodes[i]
	r.attempts[attemptKey{i, ns.attempt.Number}] = ns.attempt
}

// runStarted marks the run Running when its first node starts (the
// first since kiln retry), which starts its timeout.
func (r *round) runStarted() {
	rs := r.rs
	if rs.run.Status.StartedAt != nil {
		return
	}
	rs.run.Status.StartedAt = r.timePtr()
	r.runBegan = true
	r.setRun(apiv1.PhaseRunning, "Started", "", "")
}

// setRun moves the run to phase.
func (r *round) setRun(phase apiv1.Phase, reason string, code apiv1.Code, msg string) {
	st := &r.rs.run.Status
	if st.Phase == phase && st.Message == msg {
		return
	}
	st.Phase, st.Code, st.Message = phase, code, msg
	if phase.Done() {
		st.FinishedAt = r.timePtr()
		r.runEnded = true
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
	r.saveProgress()
	if r.runDirty {
		st := r.rs.run.Status
		st.Nodes = nil
		c.Status = &st
	}
	added := make(map[int]bool, len(r.added))
	for _, i := range r.added {
		added[i] = true
		c.Added = append(c.Added, r.rs.nodes[i].status)
	}
	for i := range r.nodes {
		if added[i] {
			continue
		}
		st := r.rs.nodes[i].status
		if !r.expanded[i] {
			st.Expansion = nil // written once, when the node expands
		}
		c.Nodes = append(c.Nodes, st)
	}
	c.Nodes = append(c.Nodes, r.unbuilt...)
	for k, a := range r.attempts {
		if ns := r.rs.nodes[k.node]; ns.attempt.Number == k.number {
			a = ns.attempt // the current attempt, as it stands at the end of the round
		}
		c.Attempts = append(c.Attempts, store.AttemptRow{Node: r.rs.nodes[k.node].status.Name, AttemptStatus: a})
	}
	return c
}
