package controller

import (
	"context"
	"fmt"
	"sync"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// Runs are the runs an engine works, and what users ask of them: submit,
// claim, cancel, stop, suspend, retry and rerun. Each operation writes its
// request to the store, where any engine of the store finds it, and wakes
// the run at once when this engine works it; the run's next round acts on
// it. Runs are safe for concurrent use.
type Runs struct {
	cfg     Config
	lead    *Leadership
	parts   *Parts
	enqueue func(apiv1.RunID) // has a run go round
	restore func(ctx context.Context, rs *runState) error

	mu       sync.Mutex
	byID     map[apiv1.RunID]*runState
	watchers map[chan struct{}]bool
}

// get returns run id's state, or nil when this engine does not work it.
func (rt *Runs) get(id apiv1.RunID) *runState {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.byID[id]
}

// track starts working on rs. The room of the attempts it holds running
// is counted in the pool first (an adopted run's attempts went on while
// no engine watched them).
func (rt *Runs) track(ctx context.Context, rs *runState) error {
	var holds []resource.Claim
	for i := range rs.active {
		holds = append(holds, rs.heldClaim(i))
	}
	if len(holds) > 0 {
		if err := rt.cfg.Pool.Hold(ctx, holds); err != nil {
			return fmt.Errorf("counting the room of run %s's running attempts: %w", rs.run.ID, err)
		}
	}
	rt.mu.Lock()
	rt.byID[rs.run.ID] = rs
	rt.mu.Unlock()
	rt.enqueue(rs.run.ID)
	return nil
}

// remove stops working on rs, closing its Done, and reports whether rs
// was the state the engine worked (not one replaced by a reload).
func (rt *Runs) remove(rs *runState) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.byID[rs.run.ID] != rs {
		return false
	}
	delete(rt.byID, rs.run.ID)
	close(rs.done)
	return true
}

// each calls fn with every run the engine works, holding the table.
func (rt *Runs) each(fn func(*runState)) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, rs := range rt.byID {
		fn(rs)
	}
}

// Owns reports whether this engine works run id now.
func (rt *Runs) Owns(id apiv1.RunID) bool { return rt.get(id) != nil }

// Owned returns the runs this engine works on now, for a caller to tell
// the runs a claim took over from those it already had.
func (rt *Runs) Owned() map[apiv1.RunID]bool {
	out := map[apiv1.RunID]bool{}
	rt.each(func(rs *runState) { out[rs.run.ID] = true })
	return out
}

// Done returns a channel closed when the engine stops working on run id:
// it finished, or another engine took it over.
func (rt *Runs) Done(id apiv1.RunID) <-chan struct{} {
	if rs := rt.get(id); rs != nil {
		return rs.done
	}
	closed := make(chan struct{})
	close(closed)
	return closed
}

// TasksByPhase counts the tasks of the runs this engine works on. It reads
// the nodes' last saved phases, taking no run's lock for long.
func (rt *Runs) TasksByPhase() map[apiv1.Phase]int {
	out := map[apiv1.Phase]int{apiv1.PhaseRunning: 0, apiv1.PhaseRetrying: 0, apiv1.PhaseSuspended: 0}
	rt.each(func(rs *runState) {
		out[apiv1.PhaseRunning] += int(rs.running.Load())
		out[apiv1.PhaseRetrying] += int(rs.backingOff.Load())
		out[apiv1.PhaseSuspended] += int(rs.parked.Load())
	})
	return out
}

// Changes returns a channel that receives a value, without blocking the
// engine, after each saved round, and a function to stop receiving.
func (rt *Runs) Changes() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	rt.mu.Lock()
	rt.watchers[ch] = true
	rt.mu.Unlock()
	return ch, func() {
		rt.mu.Lock()
		delete(rt.watchers, ch)
		rt.mu.Unlock()
	}
}

// changed tells the watchers a round was saved.
func (rt *Runs) changed() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for ch := range rt.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// request records, with set, a request about run id for its next round, and
// wakes it, if this engine works it.
func (rt *Runs) request(id apiv1.RunID, set func(*runState)) {
	rs := rt.get(id)
	if rs == nil {
		return
	}
	rs.mu.Lock()
	set(rs)
	rs.mu.Unlock()
	rt.enqueue(id)
}

// asked passes on what another process asked of a run this engine works
// (see store.RenewLeases), waking the run if that is new.
func (rt *Runs) asked(req store.Request) {
	rs := rt.get(req.Run)
	if rs == nil {
		return
	}
	rs.mu.Lock()
	wake := req.Cancel || req.Stop || rs.suspendReq != req.Suspend
	rs.cancelReq = rs.cancelReq || req.Cancel
	rs.stopReq = rs.stopReq || req.Stop
	rs.suspendReq = req.Suspend
	rs.mu.Unlock()
	if wake {
		rt.enqueue(req.Run)
	}
}
