package controller

import (
	"context"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// waits are the nodes that wait for something other than room: gates
// (an approval, a signal, a time) and sensors (a file). What each waits
// for, and what ends its wait, is its kind's (node.Waiter); waits start
// them, read what was sent to them and end them.
type waits struct{ cfg *Config }

// gatePoll is how often a run with a gate waiting for a person reads what
// was sent to it, when no one wakes the run sooner (an input sent through
// another process).
const gatePoll = time.Second

// start starts gate i's wait: it holds no room, and its status says
// what it waits for.
func (w *waits) start(ctx context.Context, r *round, i int) {
	rs := r.rs
	ns := rs.nodes[i]
	in := newInputs(w.cfg, rs, i, rs.attemptID(i, 1)).recording()
	st, err := rs.kinds[i].waiter.Wait(ctx, &rs.plan.Tasks[i], in, r.now)
	ns.status.Inputs = recorded(in.seen)
	if err != nil {
		code, msg := codeOf(err)
		r.failNode(i, code, msg)
		return
	}
	ns.status.Gate = st
	ns.status.StartedAt = r.timePtr()
	r.runStarted()
	rs.gates[i] = true
	r.setNode(i, apiv1.PhaseRunning, "Waiting", "", rs.kinds[i].waiter.Describe(st))
}

// decide ends the waits that are over: an input arrived, a sleep or a
// timeout ran out. A run that stops stops its gates' waits, but for
// those of its exit handler while it fails (a stop included).
func (w *waits) decide(ctx context.Context, r *round) error {
	rs := r.rs
	if len(rs.gates) == 0 {
		return nil
	}
	if rs.stopping != "" {
		for i := range rs.gates {
			if rs.stopping != apiv1.PhaseCancelling && rs.inExitHandler(i) {
				continue // a failing or stopped run runs its exit handler, gates included
			}
			st := rs.nodes[i].status.Gate
			st.Decision, st.At = "cancelled", r.timePtr()
			r.endWait(i, apiv1.PhaseCancelled, apiv1.CodeCancelled, "stopped waiting: "+rs.stopMsg)
		}
		if len(rs.gates) == 0 {
			return nil
		}
	}
	inputs, err := w.inputs(ctx, rs)
	for i := range rs.gates {
		ns := rs.nodes[i]
		in := inputs[ns.status.Name]
		if r.suspend && in == nil {
			continue // its clock is stopped while the run is suspended; an input is still taken
		}
		v, skip, done := rs.kinds[i].waiter.Decide(&rs.plan.Tasks[i], ns.status.Gate, in, r.now)
		switch {
		case !done:
		case skip:
			r.endWait(i, apiv1.PhaseSkipped, "", v.Message)
		case v.Phase == apiv1.PhaseSucceeded:
			ns.status.Outputs = v.Outputs
			r.endWait(i, apiv1.PhaseSucceeded, "", rs.kinds[i].waiter.Describe(ns.status.Gate))
		default:
			delete(rs.gates, i)
			r.nodes[i] = true
			r.failNode(i, v.Code, v.Message)
		}
	}
	return err
}

// endWait ends gate i's wait in phase.
func (r *round) endWait(i int, phase apiv1.Phase, code apiv1.Code, msg string) {
	delete(r.rs.gates, i)
	reason := string(phase)
	r.setNode(i, phase, reason, code, msg)
}

// inputs reads, for each waiting gate that takes one, the first input
// sent since it began waiting. A gate that only sleeps needs none.
func (w *waits) inputs(ctx context.Context, rs *runState) (map[string]*apiv1.GateInput, error) {
	out := map[string]*apiv1.GateInput{}
	asks := false
	for i := range rs.gates {
		asks = asks || rs.kinds[i].waiter.TakesInput(rs.nodes[i].status.Gate)
	}
	if !asks {
		return out, nil
	}
	rows, err := w.cfg.Store.GateInputs(ctx, rs.run.ID)
	if err != nil {
		return out, fmt.Errorf("reading what was sent to the gates of run %s: %w", rs.run.ID, err)
	}
	for _, row := range rows {
		in := row.GateInput
		if i, ok := rs.plan.Index[row.Node]; ok && rs.gates[i] && out[row.Node] == nil && sentDuring(rs.nodes[i].status.Gate, &in) {
			out[row.Node] = &in
		}
	}
	return out, nil
}

// sentDuring reports whether in was sent while the gate waited.
func sentDuring(st *apiv1.GateStatus, in *apiv1.GateInput) bool {
	return st.WaitingSince == nil || !in.At.Before(*st.WaitingSince)
}

// gateWake is when the run must look at its waiting nodes again: the
// earliest wake time, and soon while one waits for a person.
func (rs *runState) gateWake(consider func(time.Time), now time.Time) {
	for i := range rs.gates {
		st := rs.nodes[i].status.Gate
		if st.WakeAt != nil {
			consider(*st.WakeAt)
		}
		if st.NextLook != nil {
			consider(*st.NextLook)
		}
		if rs.kinds[i].waiter.TakesInput(st) {
			consider(now.Add(gatePoll))
		}
	}
}
