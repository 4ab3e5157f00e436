package controller

import (
	"context"
	"time"

	"kiln.dev/kiln/internal/store"
)

// leaseLoop renews this engine's leases every third of their TTL and
// passes on cancel requests written by other processes.
func (c *Controller) leaseLoop(ctx context.Context) {
	t := time.NewTicker(c.cfg.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.renew(ctx)
		}
	}
}

func (c *Controller) renew(ctx context.Context) {
	cancel, err := c.cfg.Store.RenewLeases(ctx, store.RenewLeasesParams{Owner: c.cfg.Owner, Until: c.now().Add(c.cfg.LeaseTTL)})
	if err != nil {
		c.log.Error("renewing leases", "err", err)
		return
	}
	for _, id := range cancel {
		c.requestCancel(id)
	}
}
