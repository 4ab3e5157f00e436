package controller

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/store"
)

// A party's part of a federated run (run.Federation.Part) is a run like
// any other, but no attempt of its tasks starts until the initiator orders
// it: the initiator first has every party reserve room for the attempt's
// share (ReserveShare), then orders it started (OrderShare). A failed
// attempt waits for the initiator's word instead of spending retries: the
// initiator decides, for every party at once, whether the task runs
// again. Orders are kept in the store, so a restarted party acts on the
// latest one.

// partState is what the engine keeps of a part run.
type partState struct {
	info   *apiv1.FederationInfo
	orders map[string]store.ShareOrderRow // the latest order, by task
	held   map[int]bool                   // ready nodes waiting for their start order
	given  map[string]bool                // reservations given back, by holder
}

// FederationFile is the file, in a share's attempt directory, that says
// where the share and its peers meet.
const FederationFile = "federation.json"

// newPartState returns the part state of run, nil if it is no part.
func newPartState(run *apiv1.Run) *partState {
	if run.Federation == nil || !run.Federation.Part {
		return nil
	}
	return &partState{info: run.Federation, orders: map[string]store.ShareOrderRow{}, held: map[int]bool{}, given: map[string]bool{}}
}

// startOrdered reports whether attempt n of task may start.
func (p *partState) startOrdered(task string, n int) bool {
	o, ok := p.orders[task]
	return ok && o.Action == apiv1.OrderStart && o.Attempt == n
}

// load reads the orders of a part loaded from the store, so that
// the attempts found running rebuild the spec they were launched with.
func (ps *Parts) load(ctx context.Context, rs *runState) error {
	if rs.part == nil {
		return nil
	}
	orders, err := ps.store.ShareOrders(ctx, rs.run.ID)
	if err != nil {
		return fmt.Errorf("reading the initiator's orders: %w", err)
	}
	rs.part.orders = orders
	return nil
}

// read reads the part's latest orders and acts on them: a held
// node ordered to start is ready again, a running attempt ordered to
// stop is stopped, a node ordered skipped ends.
func (ps *Parts) read(ctx context.Context, r *round) error {
	p := r.rs.part
	if p == nil || r.rs.stopping != "" {
		return nil
	}
	orders, err := ps.store.ShareOrders(ctx, r.rs.run.ID)
	if err != nil {
		return fmt.Errorf("reading the initiator's orders: %w", err)
	}
	p.orders = orders
	for i, ns := range r.rs.nodes {
		if o, ok := orders[ns.status.Name]; ok && !ns.status.Phase.Done() {
			r.obey(i, o)
		}
	}
	return nil
}

// obey acts on order o for node i.
func (r *round) obey(i int, o store.ShareOrderRow) {
	rs, p, ns := r.rs, r.rs.part, r.rs.nodes[i]
	switch {
	case o.Action == apiv1.OrderStart && p.held[i] && o.Attempt == ns.attempt.Number+1:
		delete(p.held, i)
		ns.waiting = false
		rs.ready.pushFront(i, rs.plan.Tasks[i].Spec.Priority)
		rs.fresh = append(rs.fresh, i)
	case rs.active[i] && (o.Attempt > ns.attempt.Number || o.Action != apiv1.OrderStart) && o.Attempt >= ns.attempt.Number:
		r.stopAttempt(i, cmp.Or(o.Code, apiv1.CodeShareAborted)) // stopped, or a later attempt was ordered
	case ends(o.Action) && !rs.active[i]:
		r.endShare(i, o)
	}
	if o.Action != apiv1.OrderStart && o.Action != apiv1.OrderReserve && !rs.active[i] {
		r.giveBackReservation(i)
	}
}

// giveBackReservation gives back the room reserved for node i's next
// attempt, which will not start as reserved: once per attempt.
func (r *round) giveBackReservation(i int) {
	holder := r.rs.attemptID(i, r.rs.nodes[i].attempt.Number+1).String()
	if r.rs.part.given[holder] {
		return
	}
	r.rs.part.given[holder] = true
	r.released = append(r.released, holder)
	r.withdraw = append(r.withdraw, shareWaiter(holder))
}

// ends reports whether an order action ends a share for good.
func ends(action string) bool { return action == apiv1.OrderSkip || action == apiv1.OrderFail }

// endShare ends node i, which the initiator will not run again: Failed
// if an attempt of it failed or the federated run failed, else Skipped.
func (r *round) endShare(i int, o store.ShareOrderRow) {
	rs, ns := r.rs, r.rs.nodes[i]
	delete(rs.part.held, i)
	delete(rs.retrying, i)
	rs.ready.remove(i)
	switch {
	case ns.attempt.Number > 0:
		r.failNode(i, ns.attempt.Code, fmt.Sprintf("attempt %d failed: %s; not run again: %s", ns.attempt.Number, ns.attempt.Message, o.Reason))
	case o.Action == apiv1.OrderFail:
		r.failNode(i, cmp.Or(o.Code, apiv1.CodeShareAborted), "not run: "+o.Reason)
	default:
		r.skipNode(i, "", "skipped by the initiator: "+o.Reason)
	}
}

// holdShare keeps node i, ready in a part, from starting until the initiator
// orders its next attempt, and reports whether it did.
func (r *round) holdShare(i int) bool {
	p, ns := r.rs.part, r.rs.nodes[i]
	if p == nil || p.startOrdered(ns.status.Name, ns.attempt.Number+1) {
		return false
	}
	if p.held[i] {
		return true
	}
	p.held[i] = true
	msg := fmt.Sprintf("waiting for the initiator (%s) to start attempt %d: every party admits its share first", p.info.Initiator, ns.attempt.Number+1)
	if ns.status.Phase != apiv1.PhaseWaiting || ns.status.Message != msg {
		r.setNode(i, apiv1.PhaseWaiting, reasonHeld, "", msg)
	}
	return true
}

// reasonHeld is the reason of a part's node waiting for its start order.
const reasonHeld = "WaitingForInitiator"

// shareFailed keeps node i of a part, whose attempt failed, waiting for
// the initiator: it reports false when the run is no part, or stops.
func (r *round) shareFailed(i int, code apiv1.Code, msg string) bool {
	rs := r.rs
	if rs.part == nil || rs.stopping != "" {
		return false
	}
	ns := rs.nodes[i]
	if o := rs.part.orders[ns.status.Name]; ends(o.Action) {
		r.failNode(i, code, fmt.Sprintf("attempt %d failed: %s; not run again: %s", ns.attempt.Number, msg, o.Reason))
		return true
	}
	ns.status.RetryAt = r.timePtr()
	rs.retrying[i] = true
	r.setNode(i, apiv1.PhaseRetrying, reasonHeld, code,
		fmt.Sprintf("attempt %d failed: %s; the initiator decides whether it runs again", ns.attempt.Number, msg))
	return true
}

// abortMessage says why the initiator (or, for an order with a code,
// this party) stopped node i's attempt.
func (rs *runState) abortMessage(i int) string {
	msg := "stopped by the initiator"
	o := rs.part.orders[rs.nodes[i].status.Name]
	switch {
	case o.Code != "":
		msg = "stopped by this party: " + o.Reason
	case o.Attempt > rs.nodes[i].attempt.Number:
		msg += fmt.Sprintf(": it ordered attempt %d", o.Attempt)
	case o.Reason != "":
		msg += ": " + o.Reason
	}
	return msg
}

// federate gives the processes of attempt n of part node i where they
// and their peers meet, from the initiator's start order: the same order
// always gives the same spec. ch, if set, adds the federation channel.
func (rs *runState) federate(i, n int, spec *job.Spec, dir string, ch Channel) error {
	p := rs.part
	name := rs.nodes[i].status.Name
	ref := p.share(name)
	o := p.orders[name]
	if o.Attempt != n || o.Address == "" {
		return fmt.Errorf("attempt %d of share %s has no start order with an address from the initiator", n, name)
	}
	peers := slices.DeleteFunc(slices.Clone(o.Peers), func(pr apiv1.Peer) bool { return pr.Party == ref.Party && pr.Task == ref.Task && pr.Role == ref.Role })
	file, err := json.Marshal(struct {
		apiv1.Peer
		Run   apiv1.RunID  `json:"run"`
		Peers []apiv1.Peer `json:"peers"`
	}{apiv1.Peer{Party: ref.Party, Role: ref.Role, Task: ref.Task, Address: o.Address}, p.info.Run, peers})
	if err != nil {
		return err
	}
	list, _ := json.Marshal(peers)
	if spec.Files == nil {
		spec.Files = map[string]string{}
	}
	spec.Files[FederationFile] = string(file)
	env := []string{
		"KILN_PARTY=" + ref.Party, "KILN_ROLE=" + ref.Role, "KILN_FEDERATED_RUN=" + string(p.info.Run),
		"KILN_FEDERATION_ADDRESS=" + o.Address, "KILN_FEDERATION_PEERS=" + string(list),
		"KILN_FEDERATION_FILE=" + filepath.Join(dir, FederationFile),
	}
	if ch != nil {
		more, err := ch.ChannelEnv(rs.run.ID, name, n)
		if err != nil {
			return fmt.Errorf("the federation channel of share %s: %w", name, err)
		}
		env = append(env, more...)
	}
	for k := range spec.Processes {
		spec.Processes[k].Env = append(spec.Processes[k].Env, env...)
	}
	return nil
}

// share is the reference of the part's task name.
func (p *partState) share(name string) apiv1.ShareRef {
	for _, s := range p.info.Shares {
		if s.Name == name {
			return s
		}
	}
	return apiv1.ShareRef{Task: name, Party: p.info.Party, Name: name}
}

// shareWaiter names, in the pool's queue, the reservation of the
// attempt whose room holder holds: apart from the node's own waiter, so
// the engine's rounds never withdraw it.
func shareWaiter(holder string) string { return "federation:" + holder }
