package local

import (
	"context"
	"math"
	"time"

	"kiln.dev/kiln/internal/job"
)

// Watch implements backend.Notifier: it long-polls the supervisor for
// exits and calls exited for each. When it (re)connects, when the
// supervisor restarted and when exits were dropped, it calls resync,
// since exits may have been missed; resync is always called once first.
// The same call tells the engine's pool, at once, when another engine
// starts or stops waiting for room (see Pool.HandOver), and when room was
// granted to its waiters (see Pool.Granted).
func (b *Backend) Watch(ctx context.Context, exited func(id job.AttemptID, st job.Status), resync func()) {
	var after uint64 = math.MaxUint64 // asks for the current position
	var instance string
	var granted uint64
	for ctx.Err() == nil {
		var r ExitsReply
		err := b.call(ctx, "Supervisor.Exits", ExitsArgs{After: after, Wait: 5 * time.Second, Contended: !b.alone.Load(), Granted: granted}, &r)
		if err != nil {
			after = math.MaxUint64
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		b.alone.Store(!r.Contended)
		if r.Granted != granted && r.Unasked > 0 { // a grant the engine asked for in the same call needs no wake-up
			select {
			case b.grants <- struct{}{}:
			default:
			}
		}
		granted = r.Granted
		if r.Reset || r.Instance != instance {
			instance, after = r.Instance, r.Seq
			resync()
			continue
		}
		for _, e := range r.Exits {
			if id, err := job.ParseAttemptID(e.ID); err == nil {
				exited(id, e.Status.jobStatus())
			}
		}
		after = r.Seq
	}
}
