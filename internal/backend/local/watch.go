package local

import (
	"context"
	"time"

	"kiln.dev/kiln/internal/job"
)

// Watch implements backend.Notifier: the supervisor pushes exits on the
// engine's connection as they happen, and Watch calls exited for each.
// When it (re)connects, when the supervisor restarted and when exits were
// dropped, it calls resync, since exits may have been missed; resync is
// always called once first. The same pushes tell the engine's pool, at
// once, when another engine starts or stops waiting for room (see
// Pool.HandOver), and when room was granted to its waiters (see
// Pool.Granted).
func (b *Backend) Watch(ctx context.Context, exited func(id job.AttemptID, st job.Status), resync func()) {
	var instance string
	var granted uint64
	for ctx.Err() == nil {
		c, err := b.connect(ctx)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond): // the supervisor cannot be started now: try again
			}
			continue
		}
		exits, dead := c.subscribe()
		instance = "" // a new connection starts where exits stand: resync first
		for watching := true; watching; {
			select {
			case <-ctx.Done():
				c.unsubscribe()
				return
			case <-dead:
				b.drop(c)
				watching = false
			case r := <-exits:
				instance, granted = b.pushed(r, instance, granted, exited, resync)
			}
		}
	}
}

// pushed handles one push of exits, returning the supervisor's instance
// and the count of grants as they now stand.
func (b *Backend) pushed(r ExitsReply, instance string, granted uint64, exited func(job.AttemptID, job.Status), resync func()) (string, uint64) {
	b.alone.Store(!r.Contended)
	if r.Granted != granted && r.Unasked > 0 { // a grant the engine asked for in the same call needs no wake-up
		select {
		case b.grants <- struct{}{}:
		default:
		}
	}
	if r.Reset || r.Instance != instance {
		resync()
		return r.Instance, r.Granted
	}
	for _, e := range r.Exits {
		if id, err := job.ParseAttemptID(e.ID); err == nil {
			exited(id, e.Status.jobStatus())
		}
	}
	return instance, r.Granted
}
