package v1alpha1

import "strings"

// Phase is where a run, a node or an attempt is in its life.
type Phase string

// Phases of runs, nodes and attempts. Not every phase applies to all three:
// Failing and Cancelling are run phases; Waiting, Retrying and Skipped are
// node phases.
const (
	// PhasePending: accepted, nothing started yet.
	PhasePending Phase = "Pending"
	// PhaseWaiting: ready to start, waiting for resources.
	PhaseWaiting Phase = "Waiting"
	// PhaseRunning: at least one process is running.
	PhaseRunning Phase = "Running"
	// PhaseRetrying: an attempt failed and the next one waits for its backoff.
	PhaseRetrying Phase = "Retrying"
	// PhaseFailing: a task failed; running tasks finish, nothing new starts.
	PhaseFailing Phase = "Failing"
	// PhaseCancelling: a cancel was asked for; running tasks are being stopped.
	PhaseCancelling Phase = "Cancelling"
	// PhaseSucceeded: finished well.
	PhaseSucceeded Phase = "Succeeded"
	// PhaseFailed: finished badly.
	PhaseFailed Phase = "Failed"
	// PhaseCancelled: stopped on request.
	PhaseCancelled Phase = "Cancelled"
	// PhaseSkipped: never started, because an upstream task failed or the run stopped first.
	PhaseSkipped Phase = "Skipped"
	// PhaseSuspended: a training job stopped on request, its resources
	// released, until it is unsuspended; a run, while nothing of it can go
	// on but its suspended training jobs.
	PhaseSuspended Phase = "Suspended"
)

// Done reports whether p is final: nothing will change it again.
func (p Phase) Done() bool {
	switch p {
	case PhaseSucceeded, PhaseFailed, PhaseCancelled, PhaseSkipped:
		return true
	}
	return false
}

// RunPhases lists the phases a run can be in, in the order of its life.
func RunPhases() []Phase {
	return []Phase{PhasePending, PhaseRunning, PhaseSuspended, PhaseFailing, PhaseCancelling, PhaseSucceeded, PhaseFailed, PhaseCancelled}
}

// ParseRunPhase returns the run phase s names, in any case, and whether
// there is one.
func ParseRunPhase(s string) (Phase, bool) {
	for _, p := range RunPhases() {
		if strings.EqualFold(string(p), s) {
			return p, true
		}
	}
	return "", false
}
