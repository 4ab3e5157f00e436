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

// waitReason says why a node that needs need and was not admitted waits.
func waitReason(a resource.Admission, need resource.Request, priority int32) string {
	if a.Outranked {
		return fmt.Sprintf("waiting behind a task of higher priority than %d", priority)
	}
	return fmt.Sprintf("waiting for resources: needs %s; free when it last asked %s", need, a.Free)
}
