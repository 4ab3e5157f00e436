package server

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/training"
	"kiln.dev/kiln/internal/workflow"
)

// maxPage bounds a page of runs.
const maxPage = 500

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, apiv1.Errorf(apiv1.CodeBadRequest, fmt.Sprintf(format, args...))}
}

// submit takes a Workflow or TrainJob (with TrainingRuntimes beside it) as
// YAML or JSON. ?project= picks the project, ?param=name=value sets params.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, p *principal) error {
	project := r.URL.Query().Get("project")
	if project == "" {
		project = "default"
	}
	if !p.may(project) {
		return forbidden("the token may not submit to project %q", project)
	}
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &httpError{http.StatusRequestEntityTooLarge, apiv1.Errorf(apiv1.CodeBodyTooLarge,
			fmt.Sprintf("the body is over %d bytes", tooLarge.Limit))}
	}
	if err != nil {
		return badRequest("reading the body: %v", err)
	}
	params := map[string]string{}
	for _, kv := range r.URL.Query()["param"] {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return badRequest("param %q is not name=value", kv)
		}
		params[name] = value
	}
	docs, err := workflow.Read("request", bytes.NewReader(body))
	if err != nil {
		return err
	}
	loaded, err := app.LoadDocuments([]string{"request"}, docs, params)
	if err != nil {
		return err
	}
	id, err := s.cfg.Engine.SubmitTo(r.Context(), loaded, project)
	if err != nil {
		return err
	}
	run, err := s.cfg.Store.GetRun(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, run)
	return nil
}

// runList is a page of runs.
type runList struct {
	Items []*apiv1.Run `json:"items"`
	// Next is the cursor of the next page; empty on the last.
	Next string `json:"next,omitempty"`
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, p *principal) error {
	q := r.URL.Query()
	params := store.ListRunsParams{Phase: apiv1.Phase(q.Get("phase")), Name: q.Get("name"), Label: q.Get("label"), Limit: 50}
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
		cur, err := decodeCursor(c)
		if err != nil {
			return badRequest("cursor %q is not one this server gave", c)
		}
		params.After = cur
	}
	runs, err := s.cfg.Store.ListRuns(r.Context(), params)
	if err != nil {
		return err
	}
	page := runList{Items: runs}
	if page.Items == nil {
		page.Items = []*apiv1.Run{}
	}
	if len(runs) == params.Limit {
		last := runs[len(runs)-1]
		page.Next = encodeCursor(store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID})
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func encodeCursor(c store.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixNano(), 10) + "/" + string(c.ID)))
}

func decodeCursor(s string) (*store.Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	at, id, ok := strings.Cut(string(b), "/")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil {
		return nil, errors.New("malformed cursor")
	}
	return &store.Cursor{CreatedAt: time.Unix(0, n).UTC(), ID: apiv1.RunID(id)}, nil
}

// run loads the run named in the path and checks the caller may see it.
func (s *Server) run(r *http.Request, p *principal) (*apiv1.Run, error) {
	run, err := s.cfg.Store.GetRun(r.Context(), apiv1.RunID(r.PathValue("id")))
	if err != nil {
		return nil, err
	}
	if !p.may(run.Project) {
		return nil, forbidden("the token may not touch project %q", run.Project)
	}
	return run, nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, run)
	return nil
}

func (s *Server) cancel(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	if err := s.cfg.Engine.Cancel(r.Context(), run.ID); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"run": string(run.ID), "requested": "cancel"})
	return nil
}

// retry runs a Failed or Cancelled run again from where it stopped.
func (s *Server) retry(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	err = s.cfg.Engine.Retry(r.Context(), run.ID)
	if errors.Is(err, store.ErrConflict) {
		return &httpError{http.StatusConflict, apiv1.Errorf(apiv1.CodeBadRequest, err.Error())}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"run": string(run.ID), "requested": "retry"})
	return nil
}

func (s *Server) suspend(suspend bool) func(http.ResponseWriter, *http.Request, *principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		run, err := s.run(r, p)
		if err != nil {
			return err
		}
		if err := s.cfg.Engine.Suspend(r.Context(), run.ID, suspend); err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, map[string]any{"run": run.ID, "suspend": suspend})
		return nil
	}
}

func (s *Server) runtimes(w http.ResponseWriter, _ *http.Request, _ *principal) error {
	writeJSON(w, http.StatusOK, map[string]any{"items": training.Builtin()})
	return nil
}
