package resource

import "slices"

// waiter is a node waiting for room: what its engine last asked for it.
type waiter struct {
	key      string
	session  string
	claim    Claim
	capacity Request // the engine's capacity when it asked
	seq      uint64  // when it first waited: first come among equals
}

// queue holds the waiters in admission order: higher priority first, then
// first come. A waiter keeps its place while it waits, however often its
// engine asks again.
type queue struct {
	byKey     map[string]*waiter
	order     []*waiter // admission order
	byPrio    map[int32]int
	bySession map[string]int
	byProject map[string]int
	next      uint64
}

func newQueue() *queue {
	return &queue{byKey: map[string]*waiter{}, byPrio: map[int32]int{}, bySession: map[string]int{}, byProject: map[string]int{}}
}

// before reports whether a goes ahead of b.
func before(a, b *waiter) bool {
	if a.claim.Priority != b.claim.Priority {
		return a.claim.Priority > b.claim.Priority
	}
	return a.seq < b.seq
}

// put queues w under its key, keeping the place of a waiter already
// queued there unless its priority changed.
func (q *queue) put(w waiter) {
	if old, ok := q.byKey[w.key]; ok {
		if old.claim.Priority == w.claim.Priority && old.session == w.session {
			old.claim, old.capacity = w.claim, w.capacity
			return
		}
		w.seq = old.seq
		q.remove(w.key)
	} else {
		w.seq = q.next
		q.next++
	}
	nw := &w
	i, _ := slices.BinarySearchFunc(q.order, nw, func(e, t *waiter) int {
		if before(e, t) {
			return -1
		}
		return 1
	})
	q.order = slices.Insert(q.order, i, nw)
	q.byKey[w.key] = nw
	q.byPrio[w.claim.Priority]++
	q.bySession[w.session]++
	q.byProject[w.claim.Project]++
}

// remove takes key's waiter out of the queue, if it waits.
func (q *queue) remove(key string) {
	w, ok := q.byKey[key]
	if !ok {
		return
	}
	delete(q.byKey, key)
	i, found := slices.BinarySearchFunc(q.order, w, func(e, t *waiter) int {
		switch {
		case e == t:
			return 0
		case before(e, t):
			return -1
		}
		return 1
	})
	if found {
		q.order = slices.Delete(q.order, i, i+1)
	}
	if q.byPrio[w.claim.Priority]--; q.byPrio[w.claim.Priority] == 0 {
		delete(q.byPrio, w.claim.Priority)
	}
	if q.bySession[w.session]--; q.bySession[w.session] == 0 {
		delete(q.bySession, w.session)
	}
	if q.byProject[w.claim.Project]--; q.byProject[w.claim.Project] == 0 {
		delete(q.byProject, w.claim.Project)
	}
}

// topAbove reports whether anything waits at a priority above p.
func (q *queue) topAbove(p int32) bool {
	for prio := range q.byPrio {
		if prio > p {
			return true
		}
	}
	return false
}

// others reports whether a session other than session has a waiter.
func (q *queue) others(session string) bool {
	return len(q.byKey) > q.bySession[session]
}

// othersThan reports whether a waiter of another project than project waits.
func (q *queue) othersThan(project string) bool {
	return len(q.byKey) > q.byProject[project]
}
