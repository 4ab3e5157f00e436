package controller

import "container/heap"

// readyQueue holds a run's nodes that may start, in admission order
// (admitsBefore). Pushing, popping and removing a node cost O(log n).
type readyQueue struct {
	h     readyHeap
	next  int64 // the place of the next arrival
	front int64 // the place of the next due retry: ahead of every arrival
}

func newReadyQueue() *readyQueue {
	return &readyQueue{h: readyHeap{pos: map[int]int{}}}
}

// Len is the number of nodes in the queue.
func (q *readyQueue) Len() int { return len(q.h.items) }

// push queues node at the back of its priority.
func (q *readyQueue) push(node int, priority int32) {
	q.next++
	heap.Push(&q.h, readyItem{node: node, priority: priority, seq: q.next})
}

// pushFront queues node at the front of its priority: a retry whose
// backoff has elapsed goes before nodes that never ran.
func (q *readyQueue) pushFront(node int, priority int32) {
	q.front--
	heap.Push(&q.h, readyItem{node: node, priority: priority, seq: q.front})
}

// pop takes the first node out.
func (q *readyQueue) pop() readyItem { return heap.Pop(&q.h).(readyItem) }

// peek returns the first node without taking it out.
func (q *readyQueue) peek() (readyItem, bool) {
	if len(q.h.items) == 0 {
		return readyItem{}, false
	}
	return q.h.items[0], true
}

// restore puts back a node popped earlier, in the place it had.
func (q *readyQueue) restore(it readyItem) { heap.Push(&q.h, it) }

// remove takes node out wherever it is, and reports whether it was there.
func (q *readyQueue) remove(node int) bool {
	i, ok := q.h.pos[node]
	if ok {
		heap.Remove(&q.h, i)
	}
	return ok
}

// has reports whether node is queued.
func (q *readyQueue) has(node int) bool {
	_, ok := q.h.pos[node]
	return ok
}

// nodes returns the queued nodes in no particular order.
func (q *readyQueue) nodes() []int {
	out := make([]int, len(q.h.items))
	for i, it := range q.h.items {
		out[i] = it.node
	}
	return out
}

// readyHeap is the heap behind readyQueue; pos tracks where each node is.
type readyHeap struct {
	items []readyItem
	pos   map[int]int
}

func (h *readyHeap) Len() int           { return len(h.items) }
func (h *readyHeap) Less(i, j int) bool { return admitsBefore(h.items[i], h.items[j]) }

func (h *readyHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].node], h.pos[h.items[j].node] = i, j
}

func (h *readyHeap) Push(x any) {
	it := x.(readyItem)
	h.pos[it.node] = len(h.items)
	h.items = append(h.items, it)
}

func (h *readyHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.pos, it.node)
	return it
}
