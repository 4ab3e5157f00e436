package controller

import (
	"fmt"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// logsLost records on node i's attempt, which just ended, the bytes each
// of its logs could not hold (the disk was full), before the attempt's
// end is written. The attempt's outcome does not change.
func (r *round) logsLost(i int, st *job.Status) {
	if len(st.LogsLost) == 0 {
		return
	}
	at := &r.rs.nodes[i].attempt
	at.LogsLost = make(map[string]int64, len(st.LogsLost))
	for _, l := range st.LogsLost {
		at.LogsLost[l.Log] = l.Bytes
	}
}

// logsLostEvent says, once node i's attempt has ended, which of its logs
// lost bytes and why: KLN-6011, beside the attempt's own outcome.
func (r *round) logsLostEvent(i int, st *job.Status) {
	if len(st.LogsLost) == 0 {
		return
	}
	ns := r.rs.nodes[i]
	parts := make([]string, len(st.LogsLost))
	for k, l := range st.LogsLost {
		parts[k] = fmt.Sprintf("%s lost %d bytes (%s)", l.Log, l.Bytes, l.Cause)
	}
	r.events = append(r.events, apiv1.Event{
		Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: ns.attempt.Phase, Reason: "LogsLost", Code: apiv1.CodeLogsLost, Time: r.now,
		Message: "the attempt's logs could not be written whole: " + strings.Join(parts, ", ") + "; kiln logs marks where",
	})
}
