package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/gc"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/who"
)

// Defaults of the collector's settings in Config.
const (
	DefaultGCInterval = time.Minute
	DefaultDeleteWait = 30 * time.Second
)

// newCollector builds the run collector: it removes runs' files through
// the backend, when the backend keeps any, and looks for orphan
// directories where the local backend keeps runs.
func newCollector(a *App, cfg Config) *gc.Collector {
	gcc := gc.Config{
		Store: a.Store, History: cfg.History, OrphanGrace: cfg.OrphanGrace, Log: cfg.Log, Deleted: a.Metrics.Deleted,
	}
	if r, ok := backend.As[backend.RunRemover](a.Backend); ok {
		gcc.Remover = r
	}
	if backend.Has[backend.HostOutputs](a.Backend) { // runs kept under the home
		gcc.RunsDir = filepath.Join(a.Home, "runs")
	}
	return gc.New(gcc)
}

// DeleteRun deletes run id: its records, its logs and outputs. A run
// that has not ended is refused (KLN-4010) unless force is set: then it
// is cancelled first and deleted once it has ended, if it ends within
// the engine's delete wait. KLN-4001 for an unknown run.
func (a *App) DeleteRun(ctx context.Context, id apiv1.RunID, force bool) error {
	run, err := a.GetRun(ctx, id)
	if err != nil {
		return err
	}
	if !run.Status.Phase.Done() {
		if !force {
			return unfinished(id, run.Status.Phase)
		}
		if err := a.stopForDelete(ctx, id); err != nil {
			return err
		}
	}
	err = a.GC.Delete(ctx, id)
	var pe *store.PhaseError
	var inUse *store.InUseError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return noRun(id)
	case errors.As(err, &pe):
		return unfinished(id, pe.Phase)
	case errors.As(err, &inUse):
		return &apiv1.Error{
			Code: apiv1.CodeRunInUse, Object: "Run/" + string(id),
			Message: fmt.Sprintf("the run is read by %s, a rerun that has not ended: it reuses this run's results", inUse.Readers[0]),
		}
	}
	return err
}

func unfinished(id apiv1.RunID, phase apiv1.Phase) error {
	return &apiv1.Error{
		Code: apiv1.CodeRunPhase, Object: "Run/" + string(id),
		Message: fmt.Sprintf("the run is %s; only a run that has ended can be deleted", phase),
		Hint:    "kiln delete run --force cancels it first and deletes it once it has ended",
	}
}

// stopForDelete cancels run id and waits, up to the delete wait, until it has ended.
func (a *App) stopForDelete(ctx context.Context, id apiv1.RunID) error {
	if err := a.Cancel(who.Or(ctx, localUser()+" (kiln delete run --force)"), id); err != nil && apiv1.CodeOf(err) != apiv1.CodeRunPhase {
		return err
	}
	deadline := time.Now().Add(a.deleteWait)
	for {
		run, err := a.GetRun(ctx, id)
		if err != nil || run.Status.Phase.Done() {
			return err
		}
		if time.Now().After(deadline) {
			return &apiv1.Error{
				Code: apiv1.CodeRunPhase, Object: "Run/" + string(id),
				Message: fmt.Sprintf("the run was asked to cancel but is still %s after %s; it was not deleted", run.Status.Phase, a.deleteWait),
				Hint:    "its tasks may still be stopping: run the same command again later, and see kiln describe run",
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// CollectRuns deletes, once, every run past its TTL or over its name's
// history limit and every orphan run directory, and returns what it
// deleted; with dryRun, what it would delete.
func (a *App) CollectRuns(ctx context.Context, dryRun bool) ([]gc.Deletion, error) {
	return a.GC.Collect(ctx, dryRun)
}
