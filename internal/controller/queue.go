package controller

import (
	"sync"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// admissionQueue knows the priority of every node, in every run this
// engine owns, that waits for room in the pool. A node may take resources
// only while nothing of higher priority waits: higher priority first,
// then first come, first served, with backfill among equals.
type admissionQueue struct {
	mu      sync.Mutex
	waiting map[waitKey]int32
}

type waitKey struct {
	run  apiv1.RunID
	node int
}

func newAdmissionQueue() *admissionQueue {
	return &admissionQueue{waiting: map[waitKey]int32{}}
}

// wait records that node waits with priority p.
func (q *admissionQueue) wait(run apiv1.RunID, node int, p int32) {
	q.mu.Lock()
	q.waiting[waitKey{run, node}] = p
	q.mu.Unlock()
}

// done records that node no longer waits.
func (q *admissionQueue) done(run apiv1.RunID, node int) {
	q.mu.Lock()
	delete(q.waiting, waitKey{run, node})
	q.mu.Unlock()
}

// forget drops every node of run.
func (q *admissionQueue) forget(run apiv1.RunID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for k := range q.waiting {
		if k.run == run {
			delete(q.waiting, k)
		}
	}
}

// top returns the highest priority that waits, and false if none does.
func (q *admissionQueue) top() (int32, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var best int32
	found := false
	for _, p := range q.waiting {
		if !found || p > best {
			best, found = p, true
		}
	}
	return best, found
}
