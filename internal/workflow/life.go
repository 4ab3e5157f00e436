package workflow

import (
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// maxHistory bounds a history limit: more runs than this are not a
// history anyone keeps by count.
const maxHistory = 1 << 20

// life checks how long a workflow's runs are kept: the TTL after they
// finish and the history limits of their name.
func (c *checker) life(spec *apiv1.WorkflowSpec) {
	if t := spec.TTLSecondsAfterFinished; t != nil && (*t < 0 || int64(*t) > maxSeconds) {
		c.add(apiv1.CodeOutOfRange, "spec.ttlSecondsAfterFinished",
			"ttlSecondsAfterFinished is %d, out of range: it lies from 0 to %d seconds (one year)", *t, maxSeconds)
	}
	if h := spec.HistoryLimit; h != nil {
		c.historyCount("spec.historyLimit.succeeded", h.Succeeded)
		c.historyCount("spec.historyLimit.failed", h.Failed)
	}
}

func (c *checker) historyCount(field string, n *int32) {
	if n != nil && (*n < 0 || *n > maxHistory) {
		c.add(apiv1.CodeOutOfRange, field, "%d runs is out of range: a history keeps from 0 to %d runs", *n, maxHistory)
	}
}
