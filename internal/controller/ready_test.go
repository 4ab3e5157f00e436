package controller

import (
	"slices"
	"testing"
)

func TestReadyQueue(t *testing.T) {
	t.Parallel()

	q := newReadyQueue()
	q.push(0, 0)
	q.push(1, 0)
	q.push(2, 5)
	q.pushFront(3, 0)
	q.push(4, 0)
	if !q.remove(1) || q.remove(1) || q.has(1) {
		t.Fatal("remove must take a queued node out once")
	}
	first := q.pop()
	q.restore(first)
	var got []int
	for q.Len() > 0 {
		got = append(got, q.pop().node)
	}
	if want := []int{2, 3, 0, 4}; !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v: priority first, a due retry next, then arrivals", got, want)
	}
}
