package server

import (
	"context"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// rerun starts a new run of a finished run's stored spec, as the body (an
// apiv1.RerunRequest) asks, in the source run's project, and answers with
// the new run. It needs the role that submitting does.
func (s *Server) rerun(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	var req apiv1.RerunRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Mode == "" || req.Node == "" {
		return badRequest(`the body needs "mode" (from, only or until) and "node" (a top-level task of the run)`)
	}
	if req.IdempotencyKey, err = idempotencyKey(r); err != nil {
		return err
	}
	created, replayed, err := s.rerunOnce(r.Context(), run.ID, req)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set(headerReplayed, "true")
	}
	writeJSON(w, http.StatusCreated, created)
	return nil
}

// rerunOnce reruns run id as req asks, through the engine's RerunOnce if
// it keeps idempotency keys.
func (s *Server) rerunOnce(ctx context.Context, id apiv1.RunID, req apiv1.RerunRequest) (*apiv1.Run, bool, error) {
	if once, ok := s.cfg.Engine.(interface {
		RerunOnce(ctx context.Context, id apiv1.RunID, req apiv1.RerunRequest) (*apiv1.Run, bool, error)
	}); ok {
		return once.RerunOnce(ctx, id, req)
	}
	run, err := s.cfg.Engine.Rerun(ctx, id, req)
	return run, false, err
}
