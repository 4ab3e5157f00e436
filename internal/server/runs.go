package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	trainerv1 "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/who"
)

// maxPage bounds a page of runs.
const maxPage = 500

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, err: apiv1.Errorf(apiv1.CodeBadRequest, fmt.Sprintf(format, args...))}
}

// badParam is the 400 of query parameter field, with a hint saying what
// it takes.
func badParam(field, hint, format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, err: &apiv1.Error{
		Code: apiv1.CodeBadRequest, Field: field, Message: fmt.Sprintf(format, args...), Hint: hint,
	}}
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, p *principal) error {
	q := r.URL.Query()
	params := store.ListRunsParams{Name: q.Get("name"), Limit: 50}
	if err := runFilters(q, &params, time.Now()); err != nil {
		return err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			return badRequest("limit %q is not a number from 1 to %d", v, maxPage)
		}
		params.Limit = n
	}
	if project := q.Get("project"); project != "" {
		if !p.may(project) {
			return forbidden("the token may not read project %q", project)
		}
		params.Projects = []string{project}
	} else if !p.may("*") {
		params.Projects = p.projects
	}
	if c := q.Get("cursor"); c != "" {
		cur, err := store.ParseCursor(c)
		if err != nil {
			return badRequest("cursor %q is not one this server gave", c)
		}
		params.After = cur
	}
	runs, err := s.cfg.Store.ListRuns(r.Context(), params)
	if err != nil {
		return err
	}
	page := apiv1.RunList{Items: runs}
	if page.Items == nil {
		page.Items = []*apiv1.Run{}
	}
	if len(runs) == params.Limit {
		last := runs[len(runs)-1]
		page.Next = store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}.String()
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// run loads the run named in the path and checks the caller may see it.
// A run of a project the caller may not see is answered as one that does
// not exist, word for word, so that no one learns which IDs exist
// elsewhere.
func (s *Server) run(r *http.Request, p *principal) (*apiv1.Run, error) {
	return s.runBy(r, p, s.cfg.Store.GetRun)
}

// runHead is run without the run's nodes.
func (s *Server) runHead(r *http.Request, p *principal) (*apiv1.Run, error) {
	return s.runBy(r, p, s.cfg.Store.GetRunHead)
}

// runBy is run, the run read by get.
func (s *Server) runBy(r *http.Request, p *principal, get func(context.Context, apiv1.RunID) (*apiv1.Run, error)) (*apiv1.Run, error) {
	id := apiv1.RunID(r.PathValue("id"))
	run, err := get(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, s.noRun(r, p, id)
	}
	if err != nil {
		return nil, err
	}
	if !p.may(run.Project) {
		return nil, store.ErrNotFound
	}
	return run, nil
}

// getRun answers a run; with ?nodes=false, without its nodes (their
// counts stay in its progress), for a page that reads them a page at a
// time (listNodes). nodes takes true or false only.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request, p *principal) error {
	get := s.run
	switch v := r.URL.Query().Get("nodes"); v {
	case "", "true":
	case "false":
		get = s.runHead
	default:
		return badParam("nodes", "nodes=false leaves the nodes out (GET /api/v1/runs/{id}/nodes pages them); nodes=true, the default, keeps them",
			"nodes %q is neither true nor false", v)
	}
	run, err := get(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

// getTrainJob is a TrainJob's run as Kubeflow Trainer's TrainJob reads,
// status in Trainer's shape; KLN-4032 for a run of another kind.
func (s *Server) getTrainJob(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	view, ok := trainerv1.ViewOf(run)
	if !ok {
		return &apiv1.Error{Code: apiv1.CodeNotTrainJob, Object: "Run/" + string(run.ID), Message: fmt.Sprintf("the run is of a %s, not a TrainJob", run.Kind)}
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

// cancel cancels a run (argo terminate).
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, p *principal) error {
	return s.askRun(w, r, p, "cancel", s.cfg.Engine.Cancel)
}

// stop ends a run, running its exit handlers (argo stop).
func (s *Server) stop(w http.ResponseWriter, r *http.Request, p *principal) error {
	return s.askRun(w, r, p, "stop", s.cfg.Engine.Stop)
}

// askRun asks the engine, with ask, for what of the run the request
// names, and answers that it was asked.
func (s *Server) askRun(w http.ResponseWriter, r *http.Request, p *principal, what string, ask func(context.Context, apiv1.RunID) error) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	if err := ask(who.With(r.Context(), p.sender()), run.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, apiv1.RunRequested{Run: run.ID, Requested: what})
	return nil
}

// retry runs a Failed or Cancelled run again from where it stopped.
func (s *Server) retry(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	var req apiv1.RetryRequest
	if r.ContentLength != 0 { // an empty body is the plain retry
		if err := decodeJSON(r, &req); err != nil {
			return err
		}
	}
	if err := s.cfg.Engine.Retry(who.With(r.Context(), p.sender()), run.ID, req); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, apiv1.RunRequested{Run: run.ID, Requested: "retry"})
	return nil
}

func (s *Server) suspend(suspend bool) func(http.ResponseWriter, *http.Request, *principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		run, err := s.run(r, p)
		if err != nil {
			return err
		}
		if err := s.cfg.Engine.Suspend(who.With(r.Context(), p.sender()), run.ID, suspend); err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, apiv1.RunSuspension{Run: run.ID, Suspend: suspend})
		return nil
	}
}

func (s *Server) runtimes(w http.ResponseWriter, r *http.Request, _ *principal) error {
	list, err := s.cfg.Engine.Runtimes(r.Context())
	if err != nil {
		return err
	}
	items := make([]*apiv1.TrainingRuntime, len(list))
	for i := range list {
		items[i] = &list[i]
	}
	writeJSON(w, http.StatusOK, apiv1.RuntimeList{Items: items})
	return nil
}

// noRun is KLN-4001 for run id, pointing, on a party's server, to the
// party's part of a federated run of that ID when the caller may see it.
func (s *Server) noRun(r *http.Request, p *principal, id apiv1.RunID) error {
	if s.cfg.Party == "" {
		return store.ErrNotFound
	}
	part := apiv1.PartID(id, s.cfg.Party)
	if run, err := s.cfg.Store.GetRun(r.Context(), part); err != nil || !p.may(run.Project) {
		return store.ErrNotFound
	}
	return &apiv1.Error{
		Code: apiv1.CodeRunNotFound, Object: "Run/" + string(id),
		Message: fmt.Sprintf("no such run here: run %s is federated, and this server, party %s, holds its part %s", id, s.cfg.Party, part),
		Hint:    "use " + string(part) + " here (kiln describe run " + string(part) + "), or ask the run's initiator about the whole run",
	}
}
