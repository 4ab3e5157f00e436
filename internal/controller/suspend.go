package controller

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// suspension stops the run's running training jobs while it is suspended,
// and makes suspended ones ready again once it no longer is. Tasks that
// are not training jobs carry on either way.
func (c *Controller) suspension(r *round) {
	rs := r.rs
	if rs.stopping != "" {
		return
	}
	if r.suspend {
		for i := range rs.active {
			if rs.plan.Tasks[i].Train != nil {
				c.stopAttempt(r, i, apiv1.CodeSuspended)
			}
		}
		return
	}
	for i := range rs.suspended {
		delete(rs.suspended, i)
		r.setNode(i, apiv1.PhasePending, "Resumed", "", "unsuspended; waiting to be admitted")
		rs.ready.PushBack(i)
	}
}

// suspendNode parks node i until the run is unsuspended.
func (c *Controller) suspendNode(r *round, i int, msg string) {
	delete(r.rs.queued, i)
	r.rs.nodes[i].waiting = false
	r.rs.suspended[i] = true
	r.setNode(i, apiv1.PhaseSuspended, "Suspended", "", msg)
}

// setSuspend records whether run id's training jobs should be suspended,
// and wakes the run if that changed.
func (c *Controller) setSuspend(id apiv1.RunID, suspend bool) {
	c.mu.Lock()
	rs := c.runs[id]
	c.mu.Unlock()
	if rs == nil {
		return
	}
	rs.mu.Lock()
	changed := rs.suspendReq != suspend
	rs.suspendReq = suspend
	rs.mu.Unlock()
	if changed {
		c.queue.Add(id)
	}
}

// Suspend records in the store whether run id's training jobs should be
// suspended, and acts on it at once if this engine owns the run.
func (c *Controller) Suspend(ctx context.Context, id apiv1.RunID, suspend bool) error {
	if err := c.cfg.Store.RequestSuspend(ctx, id, suspend); err != nil {
		return err
	}
	c.setSuspend(id, suspend)
	return nil
}
