package controller

import (
	"fmt"
	"time"

	"kiln.dev/kiln/internal/workflow"
)

// budget is what a node has spent of its two retry budgets: its own
// retries, which the task's failures spend, and the engine's system
// budget, which failures of the machine spend (Flyte's split).
type budget struct {
	user, system int
}

// failure is what the retry policy needs to know of a failed attempt.
type failure struct {
	// permanent: no retry can help.
	permanent bool
	// system: the machine failed, not the task.
	system bool
}

// retryDecision says whether a failed attempt is tried again, and when.
type retryDecision struct {
	retry bool
	at    time.Time
	// note is said after the failure, in the node's message.
	note string
}

// nextRetry decides what follows a failed attempt number attempt. Nothing
// is retried once the run stops, nor a permanent failure. A system
// failure spends the system budget (systemLimit) and is retried at once;
// any other spends the task's retries and waits out its backoff, counted
// by the task's own failures. spent is what was spent before this failure.
func nextRetry(f failure, spent budget, r workflow.Retry, systemLimit int, stopping bool, attempt int, now time.Time) retryDecision {
	next := attempt + 1
	switch {
	case stopping || f.permanent:
		return retryDecision{}
	case f.system && spent.system < systemLimit:
		return retryDecision{retry: true, at: now, note: fmt.Sprintf(
			"a failure of the machine, not the task: attempt %d starts now (system retries: %d of %d used; the task's own retries are untouched)",
			next, spent.system+1, systemLimit)}
	case f.system:
		return retryDecision{note: fmt.Sprintf("a failure of the machine, not the task; all %d system retries are used up", systemLimit)}
	case spent.user < r.Limit:
		at := now.Add(r.Delay(spent.user + 2))
		return retryDecision{retry: true, at: at, note: fmt.Sprintf("attempt %d starts at %s (retry %d of %d)",
			next, at.Format("15:04:05.000"), spent.user+1, r.Limit)}
	}
	return retryDecision{}
}

// spend returns spent after one more failure of kind f.
func (b budget) spend(f failure) budget {
	if f.system {
		b.system++
	} else {
		b.user++
	}
	return b
}
