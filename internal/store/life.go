package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Life deletes finished runs and finds those due for deletion: past
// their TTL, or beyond their name's history limit. Several collectors
// may share one store: only finished runs are deleted, each in one
// transaction, so a run deleted twice is ErrNotFound the second time.
type Life interface {
	// DeleteRun removes a finished run and every row that belongs to it
	// (its spec, nodes, node expansions, attempts, events and gate
	// inputs) in one transaction. ErrNotFound for an unknown run,
	// *PhaseError (ErrPhase) for one that has not finished, *InUseError
	// (ErrInUse) for one a rerun that has not ended reads from.
	DeleteRun(ctx context.Context, id apiv1.RunID) error
	// Readers returns the runs that have not ended and reuse results of
	// run id (reruns, whose tasks read the reused tasks' outputs and
	// files), in ID order.
	Readers(ctx context.Context, id apiv1.RunID) ([]apiv1.RunID, error)
	// ExpiredRuns returns the finished runs whose spec's
	// ttlSecondsAfterFinished has passed at now, longest expired first.
	ExpiredRuns(ctx context.Context, now time.Time) ([]RunRef, error)
	// RunsOverHistory returns the finished runs beyond the history limit
	// of their name and project: in each class (Succeeded; Failed and
	// Cancelled) all but the newest Keep. The newest finished run's spec
	// gives the limit of its name; a class it does not limit takes def's
	// (negative: unlimited).
	RunsOverHistory(ctx context.Context, def HistoryLimit) ([]RunRef, error)
	// MissingRuns returns those of ids that name no run, in their order.
	MissingRuns(ctx context.Context, ids []apiv1.RunID) ([]apiv1.RunID, error)
}

// HistoryLimit is how many finished runs of each name and project to
// keep, per class; negative keeps all.
type HistoryLimit struct {
	Succeeded int
	Failed    int
}

// Unlimited keeps every finished run.
var Unlimited = HistoryLimit{Succeeded: -1, Failed: -1}

// RunRef is a finished run due for deletion and why.
type RunRef struct {
	ID         apiv1.RunID
	Name       string
	Project    string
	Phase      apiv1.Phase
	FinishedAt time.Time
	// TTL is the run's ttlSecondsAfterFinished, for an expired run.
	TTL time.Duration
	// Keep is the history limit of its class, for a run over it.
	Keep int
}

// ErrInUse is returned for deleting a run that other runs, which have
// not ended, read from.
var ErrInUse = errors.New("store: the run is read by runs that have not ended")

// InUseError is ErrInUse with the runs that read from Run.
type InUseError struct {
	Run     apiv1.RunID
	Readers []apiv1.RunID
}

func (e *InUseError) Error() string {
	ids := make([]string, len(e.Readers))
	for i, r := range e.Readers {
		ids[i] = string(r)
	}
	return fmt.Sprintf("run %s is read by %s: %v", e.Run, strings.Join(ids, ", "), ErrInUse)
}

// Is makes errors.Is(err, ErrInUse) hold for an *InUseError.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }
