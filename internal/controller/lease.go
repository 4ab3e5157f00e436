package controller

import (
	"context"
	"time"

	"kiln.dev/kiln/internal/store"
)

// leaseLoop renews this engine's leases every second (well within their
// TTL) and passes on what other processes asked of its runs.
func (c *Controller) leaseLoop(ctx context.Context) {
	t := time.NewTicker(min(c.cfg.LeaseTTL/3, time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.renew(ctx)
			// Room may have come back in ways no exit announces (another
			// engine went away, a higher priority stopped waiting).
			c.admission.room.wake("", 0)
		}
	}
}

// grantLoop wakes the runs that wait for room whenever the pool granted
// some, so the nodes it was granted to ask again and start.
func (c *Controller) grantLoop(ctx context.Context, g Granter) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.Granted():
			c.admission.room.wake("", 0)
		}
	}
}

func (c *Controller) renew(ctx context.Context) {
	reqs, err := c.cfg.Store.RenewLeases(ctx, store.RenewLeasesParams{Owner: c.cfg.Owner, Until: now().Add(c.cfg.LeaseTTL)})
	if err != nil {
		if ctx.Err() == nil { // not this engine stopping
			c.log.Error("renewing leases", "err", err)
		}
		return
	}
	for _, req := range reqs {
		c.runs.asked(req)
	}
}
