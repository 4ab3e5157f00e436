package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"kiln.dev/kiln/internal/job"
)

// handler turns pod events into attempt IDs to look at again. A pod
// deleted before it ended is remembered: unless kiln deleted it, its
// attempt has lost a process.
func (b *Backend) handler() cache.ResourceEventHandler {
	notify := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok {
			if id, ok := attemptOf(p.Annotations); ok {
				b.notify(id)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { notify(obj) },
		UpdateFunc: func(_, obj any) { notify(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			p, ok := obj.(*corev1.Pod)
			if !ok {
				return
			}
			id, ok := attemptOf(p.Annotations)
			if !ok {
				return
			}
			if !terminal(p) {
				b.mu.Lock()
				if _, known := b.specs[id]; known {
					b.gone[id] = p.Name
				}
				b.mu.Unlock()
			}
			b.notify(id)
		},
	}
}

func (b *Backend) notify(id job.AttemptID) {
	select {
	case b.events <- id:
	default: // full: the next resync catches up
	}
}

// Watch reports attempts as their pods end, until ctx ends. Every second
// it also looks again at attempts that may be stuck (pending pods wait on
// timeouts, not events), and every Resync it asks the engine to compare
// everything.
func (b *Backend) Watch(ctx context.Context, exited func(id job.AttemptID, st job.Status), resync func()) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	full := time.NewTicker(b.cfg.Resync)
	defer full.Stop()
	look := func(id job.AttemptID) {
		b.mu.Lock()
		spec, done := b.specs[id], b.reported[id]
		b.mu.Unlock()
		if spec == nil || done {
			return
		}
		st, err := b.settle(ctx, spec)
		if err != nil {
			b.cfg.Log.Warn("settling an attempt; will retry", "attempt", id, "err", err)
			return
		}
		if st.State == job.StateExited {
			b.mu.Lock()
			b.reported[id] = true
			delete(b.lost, id)
			delete(b.queues, id)
			b.mu.Unlock()
			exited(id, st)
			return
		}
		if b.newlyLost(id, st) || b.queueChanged(id, st) { // an elastic gang lost a pod and runs on; a gang was placed
			exited(id, st)
		}
	}
	resync() // what ended before the watch began was not reported
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-b.events:
			look(id)
		case <-tick.C:
			for _, id := range b.waiting() {
				look(id)
			}
			b.clean(ctx)
		case <-full.C:
			resync()
		}
	}
}

// waiting lists the attempts not yet reported, whose pods may be stuck.
func (b *Backend) waiting() []job.AttemptID {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []job.AttemptID
	for id := range b.specs {
		if !b.reported[id] {
			ids = append(ids, id)
		}
	}
	return ids
}

// newlyLost reports whether st, of a running attempt, names more lost
// hosts than Watch reported before.
func (b *Backend) newlyLost(id job.AttemptID, st job.Status) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st.State != job.StateRunning || len(st.Dropped) <= b.lost[id] {
		return false
	}
	b.lost[id] = len(st.Dropped)
	return true
}
