package controller

import (
	"fmt"

	"kiln.dev/kiln/internal/resource"
)

// readyItem is a node waiting its turn to be admitted.
type readyItem struct {
	node     int
	priority int32
	// seq is the node's place in line: the order it became ready in, or,
	// for a node whose retry is due, a place ahead of every node that
	// never ran.
	seq int64
}

// admitsBefore orders the ready queue, inside one run as the ledger does
// across runs and engines: a higher priority first, then first come,
// first served.
func admitsBefore(a, b readyItem) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	return a.seq < b.seq
}

// waitTexts are the texts waitReason wrote for a run, by what they say:
// the many nodes of a fan-out that wait for the same room share one.
type waitTexts map[waitKey]string

// waitKey is what a wait's text says.
type waitKey struct {
	outranked  bool
	priority   int32
	need, free resource.Request
}

// maxWaitTexts bounds a run's waitTexts; a full one starts again.
const maxWaitTexts = 64

// text is waitReason(a, need, priority), written once for each thing it
// can say.
func (w *waitTexts) text(a resource.Admission, need resource.Request, priority int32) string {
	k := waitKey{outranked: a.Outranked, priority: priority, need: need, free: a.Free}
	if a.Outranked {
		k.need, k.free = resource.Request{}, resource.Request{}
	} else {
		k.priority = 0
	}
	if s, ok := (*w)[k]; ok {
		return s
	}
	if *w == nil || len(*w) >= maxWaitTexts {
		*w = waitTexts{}
	}
	s := waitReason(a, need, priority)
	(*w)[k] = s
	return s
}

// waitReason says why a node that needs need and was not admitted waits.
func waitReason(a resource.Admission, need resource.Request, priority int32) string {
	if a.Outranked {
		return fmt.Sprintf("waiting behind a task of higher priority than %d", priority)
	}
	return fmt.Sprintf("waiting for resources: needs %s; free when it last asked %s", need, a.Free)
}
