package controller

import (
	"context"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// Parts carry out, on this party's parts of federated runs, the orders
// the initiator gives (reserve, start, release, abort, skip), and report
// the parts' shares for it to decide on. It is safe for concurrent use.
type Parts struct {
	store store.Store
	pool  Pool
	runs  *Runs // the runs this engine works, woken by orders
}

// OrderShare carries out the initiator's order o for task of part id and
// returns the share as it then stands. A reserve asks the pool for the
// attempt's room at once and holds it (Reserved), or queues for it
// (Reserving, with the reason); a release gives it back. Every order is
// kept, replacing the task's last one, and wakes the part. Orders are
// idempotent; one for an attempt that already ended, or a release, abort
// or skip of a part that ended, changes nothing.
func (ps *Parts) OrderShare(ctx context.Context, id apiv1.RunID, task string, o store.ShareOrderRow) (apiv1.ShareStatus, error) {
	run, err := ps.store.GetRun(ctx, id)
	if err != nil {
		return apiv1.ShareStatus{}, runError(id, err, "orders go to a party's part of a federated run")
	}
	ns, err := shareNode(run, task, o.Attempt)
	if err != nil {
		return apiv1.ShareStatus{}, err
	}
	if stale(ns, o) || run.Status.Phase.Done() {
		if run.Status.Phase.Done() && (o.Action == apiv1.OrderReserve || o.Action == apiv1.OrderStart) {
			return apiv1.ShareStatus{}, orderError(id, task, fmt.Sprintf("the part is %s: it runs nothing more", run.Status.Phase))
		}
		return shareStatusOf(ns, o), nil
	}
	var live *apiv1.ShareStatus
	if live, err = ps.actOnPool(ctx, id, ns, o); err != nil {
		return apiv1.ShareStatus{}, err
	}
	if err := ps.store.PutShareOrder(ctx, id, task, o); err != nil {
		return apiv1.ShareStatus{}, runError(id, err, "orders go to a part that has not ended")
	}
	if rs := ps.runs.get(id); rs != nil {
		ps.runs.enqueue(id)
	}
	st := shareStatusOf(ns, o)
	if live != nil {
		st.State, st.Code, st.Message = live.State, live.Code, live.Message
	}
	return st, nil
}

// shareNode finds task in part run, after checking the order's attempt.
func shareNode(run *apiv1.Run, task string, attempt int) (*apiv1.NodeStatus, error) {
	if run.Federation == nil || !run.Federation.Part {
		return nil, orderError(run.ID, task, "the run is not a party's part of a federated run")
	}
	n := run.Status.Node(task)
	if n == nil {
		return nil, orderError(run.ID, task, "the part has no such task")
	}
	if attempt < 1 {
		return nil, orderError(run.ID, task, fmt.Sprintf("attempt %d: attempts count from 1", attempt))
	}
	return n, nil
}

// stale reports whether order o is for an attempt of ns that already
// started, other than a stop of it: it changes nothing then.
func stale(ns *apiv1.NodeStatus, o store.ShareOrderRow) bool {
	last := 0
	if k := len(ns.Attempts); k > 0 {
		last = ns.Attempts[k-1].Number
	}
	stop := o.Action != apiv1.OrderReserve && o.Action != apiv1.OrderStart
	return o.Attempt < last || (o.Attempt == last && !stop) || ns.Phase.Done()
}

// actOnPool reserves or gives back the room of the attempt o orders, and
// returns what the pool said of a reservation (nil for other orders).
func (ps *Parts) actOnPool(ctx context.Context, id apiv1.RunID, ns *apiv1.NodeStatus, o store.ShareOrderRow) (*apiv1.ShareStatus, error) {
	rs := ps.runs.get(id)
	if o.Action != apiv1.OrderReserve && o.Action != apiv1.OrderRelease {
		return nil, nil
	}
	if rs == nil {
		return nil, orderError(id, ns.Name, "this server's engine does not run the part (yet); send the order again")
	}
	i, ok := rs.plan.Index[ns.Name]
	if !ok {
		return nil, orderError(id, ns.Name, "the part has no such task")
	}
	cl := rs.claim(i, o.Attempt)
	waiter := shareWaiter(cl.Holder)
	if o.Action == apiv1.OrderRelease {
		return nil, errors.Join(ps.pool.Release(ctx, cl.Holder), ps.pool.Withdraw(ctx, waiter))
	}
	least := cl.Less(max(cl.Steps, 0))
	if !least.Fits(ps.pool.Capacity()) { // what the pool holds is the party's to know
		return &apiv1.ShareStatus{
			State: apiv1.ShareFailed, Code: apiv1.CodeShareNeverFits,
			Message: fmt.Sprintf("the share needs %s, more than this party's pool can ever hold", least),
		}, nil
	}
	cl.Waiter = waiter
	answers, err := ps.pool.Admit(ctx, nil, []resource.Claim{cl})
	if err != nil {
		return nil, fmt.Errorf("reserving room for %s: %w", cl.Holder, err)
	}
	return reservation(answers[0], least, projectOf(rs.run))
}

// reservation is what a party tells the initiator of a share's
// reservation: admitted, waiting, or refused by a quota that can never
// admit it (KLN-2040, at once). It says what the share needs and what
// holds it, never what the party's pool holds or has free.
func reservation(a resource.Admission, need resource.Request, project string) (*apiv1.ShareStatus, error) {
	switch {
	case a.Admitted:
		return &apiv1.ShareStatus{State: apiv1.ShareReserved}, nil
	case a.QuotaNever:
		return &apiv1.ShareStatus{
			State: apiv1.ShareFailed, Code: apiv1.CodeQuotaWait,
			Message: fmt.Sprintf("the share needs %s, more than the whole quota of project %s, the party's project for this initiator: it can never start unless that quota is raised", need, project),
		}, nil
	case a.Quota != "":
		return &apiv1.ShareStatus{State: apiv1.ShareReserving, Message: fmt.Sprintf("waiting for its quota: the share needs %s, and project %s's quota is in use", need, project)}, nil
	case a.Outranked:
		return &apiv1.ShareStatus{State: apiv1.ShareReserving, Message: "waiting behind tasks of higher priority"}, nil
	}
	return &apiv1.ShareStatus{State: apiv1.ShareReserving, Message: fmt.Sprintf("waiting for resources: the share needs %s", need)}, nil
}

// PartStatus returns part id as it stands: each share's latest order and
// how its attempt went.
func (ps *Parts) PartStatus(ctx context.Context, id apiv1.RunID) (apiv1.PartStatus, error) {
	run, err := ps.store.GetRun(ctx, id)
	if err != nil {
		return apiv1.PartStatus{}, runError(id, err, "a party's part of a federated run")
	}
	if run.Federation == nil || !run.Federation.Part {
		return apiv1.PartStatus{}, orderError(id, "", "the run is not a party's part of a federated run")
	}
	orders, err := ps.store.ShareOrders(ctx, id)
	if err != nil {
		return apiv1.PartStatus{}, runError(id, err, "a party's part of a federated run")
	}
	out := apiv1.PartStatus{
		Run: run.Federation.Run, Part: id, Party: run.Federation.Party, Phase: run.Status.Phase,
		Shares: make(map[string]apiv1.ShareStatus, len(run.Status.Nodes)),
	}
	for k := range run.Status.Nodes {
		n := &run.Status.Nodes[k]
		out.Shares[n.Name] = shareStatusOf(n, orders[n.Name])
	}
	return out, nil
}

// shareStatusOf is a share as its node and its latest order o say: how
// the ordered attempt went once it started, else what was ordered.
func shareStatusOf(n *apiv1.NodeStatus, o store.ShareOrderRow) apiv1.ShareStatus {
	st := apiv1.ShareStatus{Task: n.Name, Attempt: o.Attempt, Phase: n.Phase, Address: o.Address}
	if a := attemptNumbered(n, o.Attempt); a != nil {
		st.Code, st.Message, st.System = a.Code, a.Message, a.System
		switch a.Phase {
		case apiv1.PhaseRunning:
			st.State = apiv1.ShareRunning
		case apiv1.PhaseSucceeded:
			st.State, st.Outcome = apiv1.ShareSucceeded, apiv1.PhaseSucceeded
		default:
			st.State, st.Outcome = apiv1.ShareFailed, apiv1.PhaseFailed
		}
		return st
	}
	switch {
	case n.Phase.Done() && o.Action != apiv1.OrderRelease:
		st.State, st.Code, st.Message = apiv1.ShareFailed, n.Code, n.Message
		if n.Phase == apiv1.PhaseSkipped || n.Phase == apiv1.PhaseCancelled {
			st.State = apiv1.ShareReleased
		}
	case o.Action == "":
		st.State = apiv1.SharePending
	case o.Action == apiv1.OrderReserve:
		st.State = apiv1.ShareReserving
	case o.Action == apiv1.OrderStart:
		st.State, st.Message = apiv1.ShareReserved, "starting"
	default:
		st.State, st.Message = apiv1.ShareReleased, o.Reason
	}
	return st
}

// attemptNumbered is attempt number of n, or nil.
func attemptNumbered(n *apiv1.NodeStatus, number int) *apiv1.AttemptStatus {
	for k := range n.Attempts {
		if n.Attempts[k].Number == number && number > 0 {
			return &n.Attempts[k]
		}
	}
	return nil
}

// orderError is a refused order, KLN-7016.
func orderError(id apiv1.RunID, task, msg string) error {
	obj := "Run/" + string(id)
	if task != "" {
		msg = "task " + task + ": " + msg
	}
	return &apiv1.Error{Code: apiv1.CodeShareOrder, Object: obj, Message: msg}
}
