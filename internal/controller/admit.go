package controller

import (
	"context"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// maxClaims is how many ready nodes one round asks the pool about, in
// admission order, so a round stays cheap with a long queue.
const maxClaims = 64

// admit gives back the room of attempts that ended in this round, then
// asks the pool to admit the run's ready nodes, in order: those admitted
// start, the others wait, each showing why. A node's admission timeout is
// checked by timeouts.
func (c *Controller) admit(ctx context.Context, r *round) error {
	if len(r.released) > 0 {
		if err := c.cfg.Pool.Release(ctx, r.released...); err != nil {
			return fmt.Errorf("giving back the room of ended attempts: %w", err)
		}
		r.freed = true
	}
	rs := r.rs
	if rs.stopping != "" || rs.ready.Len() == 0 {
		rs.fresh = rs.fresh[:0]
		return nil
	}
	batch := c.candidates(r)
	claims := make([]resource.Claim, len(batch))
	for k, it := range batch {
		claims[k] = c.claim(rs, it.node)
	}
	answers, err := c.cfg.Pool.Admit(ctx, claims)
	if err != nil {
		for _, it := range batch {
			rs.ready.restore(it)
		}
		return fmt.Errorf("admitting ready nodes: %w", err)
	}
	last := resource.Admission{Free: c.cfg.Pool.Capacity()}
	for k, it := range batch {
		last = answers[k]
		if last.Admitted {
			r.admitted = append(r.admitted, claims[k].Holder)
			c.startAttempt(ctx, r, it.node)
			continue
		}
		rs.ready.restore(it)
		r.starved = true
		c.markWaiting(r, it.node, last)
	}
	c.showWaiting(r, last)
	return nil
}

// candidates pops up to maxClaims ready nodes, in admission order. Nodes
// that suspend, while the run is suspended, are suspended instead.
func (c *Controller) candidates(r *round) []readyItem {
	rs := r.rs
	var batch []readyItem
	for len(batch) < maxClaims && rs.ready.Len() > 0 {
		it := rs.ready.pop()
		if r.suspend && rs.kinds[it.node].suspends {
			c.suspendNode(r, it.node, "suspended before it started")
			continue
		}
		batch = append(batch, it)
	}
	return batch
}

// claim is node i's claim on the pool for its next attempt.
func (c *Controller) claim(rs *runState, i int) resource.Claim {
	t := &rs.plan.Tasks[i]
	return resource.Claim{
		Holder:   rs.attemptID(i, rs.nodes[i].attempt.Number+1).String(),
		Waiter:   rs.waiter(i),
		Request:  t.Request,
		Priority: t.Spec.Priority,
	}
}

// showWaiting shows, for every node that became ready and is still
// queued, why it waits: the same reason as the last node the pool
// answered, which was ahead of it.
func (c *Controller) showWaiting(r *round, last resource.Admission) {
	rs := r.rs
	for _, i := range rs.fresh {
		if rs.ready.has(i) && !rs.nodes[i].waiting {
			r.starved = true
			c.markWaiting(r, i, last)
		}
	}
	rs.fresh = rs.fresh[:0]
}

// markWaiting shows node i as waiting for room, and why, once each time
// it becomes ready; its admission timeout counts from the first time.
func (c *Controller) markWaiting(r *round, i int, a resource.Admission) {
	ns := r.rs.nodes[i]
	if ns.waiting {
		return
	}
	ns.waiting = true
	if ns.waitingSince.IsZero() {
		ns.waitingSince = r.now
	}
	t := &r.rs.plan.Tasks[i]
	if t.AdmissionTimeout > 0 {
		r.rs.queued[i] = true
	}
	r.setNode(i, apiv1.PhaseWaiting, "WaitingForResources", "", waitReason(a, t.Request, t.Spec.Priority))
}
