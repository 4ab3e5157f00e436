package controller

import (
	"sync"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// roomWaits keeps the engine's runs that wait for room in the pool, to
// wake them when some comes back, and what the pool last said was free.
// It is safe for concurrent use.
type roomWaits struct {
	mu      sync.Mutex
	enqueue func(apiv1.RunID)    // has a run go round
	free    resource.Request     // what the pool last said was free: the next round's guess
	starved map[apiv1.RunID]bool // runs with ready nodes that did not fit
	wakes   uint64               // counts wake calls: a round that saw fewer was answered before the last wake
}

func newRoomWaits(free resource.Request, enqueue func(apiv1.RunID)) *roomWaits {
	return &roomWaits{enqueue: enqueue, free: free, starved: map[apiv1.RunID]bool{}}
}

// freeGuess is what the pool last said was free: the round's guess of
// what may fit, before it asks. Other engines change it unannounced, so
// the first node is always asked about.
func (w *roomWaits) freeGuess() resource.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.free
}

func (w *roomWaits) setFreeGuess(free resource.Request) {
	w.mu.Lock()
	w.free = free
	w.mu.Unlock()
}

// othersStarved reports whether a run other than id waits for room.
func (w *roomWaits) othersStarved(id apiv1.RunID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.starved) > 1 || (len(w.starved) == 1 && !w.starved[id])
}

// seq returns the count of wakes so far, for a round to remember before
// it asks the pool.
func (w *roomWaits) seq() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wakes
}

// add marks run id as waiting for room, as the pool answered when the
// engine had seen seen wakes. If more came since, the room they announced
// may not have been in that answer: the run goes round again.
func (w *roomWaits) add(id apiv1.RunID, seen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.starved[id] = true
	if w.wakes != seen {
		w.enqueue(id)
	}
}

// wake enqueues the runs that wait for room, after from (or someone
// else, "") gave some back. It returns seen moved past this wake when no
// other came since seen, for from's own add.
func (w *roomWaits) wake(from apiv1.RunID, seen uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wakes == seen {
		seen++
	}
	w.wakes++
	for id := range w.starved {
		delete(w.starved, id)
		if id != from {
			w.enqueue(id)
		}
	}
	return seen
}

// forget drops run id, which the engine no longer works.
func (w *roomWaits) forget(id apiv1.RunID) {
	w.mu.Lock()
	delete(w.starved, id)
	w.mu.Unlock()
}
