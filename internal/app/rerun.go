package app

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/controller"
)

// Rerun starts, on this engine, a new run of run id's stored spec (its
// workflow, subworkflows and params, never the file on disk): from, only
// or until one of its top-level tasks, as req says, with req.Params
// changed. It returns the new run, linked to its source (Run.RerunOf).
// Errors are coded: KLN-4001 for an unknown run, KLN-4010 for one that
// has not ended, KLN-4020 and KLN-4021 for a task a rerun cannot start
// from (see controller.Rerun).
func (a *App) Rerun(ctx context.Context, id apiv1.RunID, req apiv1.RerunRequest) (*apiv1.Run, error) {
	run, _, err := a.RerunOnce(ctx, id, req)
	return run, err
}

// RerunOnce is Rerun, except that a rerun whose idempotency key created
// a run of the project within apiv1.IdempotencyWindow creates none: it
// answers that run, and replayed (see SubmitOnce).
func (a *App) RerunOnce(ctx context.Context, id apiv1.RunID, req apiv1.RerunRequest) (run *apiv1.Run, replayed bool, err error) {
	if err := checkCacheMode(req.Cache); err != nil {
		return nil, false, err
	}
	src, err := a.GetRun(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if err := notAPart(src); err != nil {
		return nil, false, err
	}
	key := keyOf(req.IdempotencyKey, req.Digest(id))
	return a.once(ctx, projectOf(src.Project), key, func() (*apiv1.Run, error) {
		run, err := a.Controller.Runs().Rerun(ctx, controller.RerunParams{Source: src, RerunRequest: req, Key: key})
		if err == nil && run.Federation != nil {
			a.watchFederated(run.ID, run.Federation.Roles)
		}
		return run, err
	})
}
