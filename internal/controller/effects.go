package controller

import (
	"context"
	"errors"
	"fmt"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// sideEffects launches and stops attempts after the round was saved, and
// tells the pool and the backend what ended.
func (c *Controller) sideEffects(ctx context.Context, r *round) error {
	var errs []error
	for _, i := range r.launch {
		ns := r.rs.nodes[i]
		// A node the round also stops (a cancel taken as this engine
		// relaunched an attempt an earlier one never launched) does not
		// start: the abort below records it as stopped before it started.
		if !r.rs.active[i] || ns.spec == nil || ns.stop != "" {
			continue
		}
		c.launchAsync(ctx, r.rs, i, ns, ns.spec)
	}
	for _, i := range r.abort {
		if ns := r.rs.nodes[i]; ns.spec != nil {
			if err := c.cfg.Backend.Abort(ctx, ns.spec.ID, c.cfg.Grace); err != nil {
				errs = append(errs, fmt.Errorf("stopping %s: %w", ns.spec.ID, err))
			}
		}
	}
	if rel, ok := backend.As[backend.Releaser](c.cfg.Backend); ok {
		for _, e := range r.ended {
			if err := rel.Release(ctx, e.id, e.succeeded); err != nil {
				c.log.Warn("cleaning up after an attempt", "attempt", e.id, "err", err)
			}
		}
	}
	errs = append(errs, c.admission.resizeAndJoin(ctx, r))
	if len(r.withdraw) > 0 {
		if err := c.cfg.Pool.Withdraw(ctx, r.withdraw...); err != nil {
			errs = append(errs, fmt.Errorf("withdrawing nodes from the admission queue: %w", err))
		}
	}
	seen := r.wakes
	if r.freed || r.granted {
		seen = c.admission.room.wake(r.rs.run.ID, seen)
	}
	if r.starved {
		c.admission.room.add(r.rs.run.ID, seen)
	}
	return errors.Join(errs...)
}

// launchAsync launches an attempt without holding up the run's next
// round: forking takes longer than a round. If the backend cannot be
// reached, the node is observed again, and relaunched if it never started.
// A launch the backend refuses for good (a *job.RefusedError) is the
// attempt's end, reported as the backend's watcher reports exits.
func (c *Controller) launchAsync(ctx context.Context, rs *runState, i int, ns *nodeState, spec *job.Spec) {
	c.launches.Go(func() {
		err := c.cfg.Backend.Launch(ctx, spec)
		var refused *job.RefusedError
		switch {
		case err == nil:
			ns.launched.Store(&launched{spec.ID.Number, now()})
		case errors.As(err, &refused):
			c.log.Info("the backend refused an attempt", "attempt", spec.ID, "err", err)
			st := refused.Status()
			st.FinishedAt = now()
			rs.markExited(spec.ID.Node, spec.ID.Number, st)
			c.queue.Add(rs.run.ID)
		case ctx.Err() == nil:
			c.log.Error("launching; will retry", "attempt", spec.ID, "err", err)
			rs.markDirty(i)
			c.queue.AddRateLimited(rs.run.ID)
		}
	})
}
