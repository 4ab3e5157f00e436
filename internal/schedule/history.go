package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// prune deletes the finished runs of s beyond its history limits, at
// most every HistoryEvery.
func (l *Loop) prune(ctx context.Context, s *apiv1.Schedule, now time.Time) error {
	key := s.Status.Project + "/" + s.Metadata.Name
	if last, ok := l.history[key]; ok && now.Sub(last) < l.cfg.HistoryEvery {
		return nil
	}
	l.history[key] = now
	runs, err := l.cfg.Runner.Runs(ctx, s)
	if err != nil {
		return fmt.Errorf("listing its runs: %w", err)
	}
	var errs []error
	for _, id := range OverHistory(runs, &s.Spec) {
		err := l.cfg.Runner.Delete(ctx, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrPhase) {
			errs = append(errs, fmt.Errorf("deleting run %s over its history limit: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// OverHistory returns the finished runs beyond the schedule's history
// limits, given its runs newest first: succeeded runs beyond
// successfulRunsHistoryLimit, failed and cancelled ones beyond
// failedRunsHistoryLimit.
func OverHistory(runs []*apiv1.Run, spec *apiv1.ScheduleSpec) []apiv1.RunID {
	succeeded, failed := spec.HistoryLimits()
	var out []apiv1.RunID
	for _, r := range runs {
		switch r.Status.Phase {
		case apiv1.PhaseSucceeded:
			if succeeded--; succeeded < 0 {
				out = append(out, r.ID)
			}
		case apiv1.PhaseFailed, apiv1.PhaseCancelled:
			if failed--; failed < 0 {
				out = append(out, r.ID)
			}
		}
	}
	return out
}
