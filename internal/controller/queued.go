package controller

import (
	"fmt"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
)

// queuedPrefix starts the message of a node whose running attempt waits
// for the cluster to place some of its processes.
const queuedPrefix = "queued: "

// Event reasons of a running attempt that waits to be placed, and of one
// whose processes were all placed since.
const (
	reasonQueued = "Queued"
	reasonPlaced = "Placed"
)

// queued shows whether node i's running attempt waits for the cluster to
// place its processes (a gang scheduler holds the gang until all of it
// fits): the node's message says why in the scheduler's words, and its
// handler, if it reports, shows the job Queued rather than Running. Once
// every process is placed the node says so. Each change is shown once.
func (r *round) queued(i int, st *job.Status) {
	ns := r.rs.nodes[i]
	if ns.status.Phase != apiv1.PhaseRunning {
		return
	}
	var ch node.Change
	switch q := st.Queue; {
	case q != nil:
		msg := fmt.Sprintf("%s%d of the attempt's processes wait for the cluster to place them (%s): %s",
			queuedPrefix, len(q.Processes), q.Reason, q.Message)
		if ns.status.Message == msg {
			return
		}
		ch = node.Change{Reason: reasonQueued, Message: msg, Queue: q}
	case strings.HasPrefix(ns.status.Message, queuedPrefix):
		msg := fmt.Sprintf("attempt %d: every process was placed and runs", ns.attempt.Number)
		ch = node.Change{Reason: reasonPlaced, Message: msg, Placed: true}
	default:
		return
	}
	ns.status.Message = ch.Message
	r.report(i, ch)
	r.nodes[i] = true
	r.events = append(r.events, apiv1.Event{
		Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: apiv1.PhaseRunning,
		Reason: ch.Reason, Message: ch.Message, Time: r.now,
	})
}
