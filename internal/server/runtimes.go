package server

import (
	"context"
	"net/http"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// RuntimeKeeper keeps the training runtimes stored with kiln apply (each
// project's TrainingRuntimes, and ClusterTrainingRuntimes for every
// project) beside the built-in ones; the embedded engine (internal/app)
// is one. Errors are coded: KLN-1xxx for an object that is not valid,
// KLN-4028 for a runtime not stored, KLN-4029 for deleting a built-in one.
type RuntimeKeeper interface {
	// Apply checks the WorkflowTemplates and runtimes of in.Files and
	// stores them, all or none, and says what it did with each.
	Apply(ctx context.Context, in apiv1.TemplateApply) (*apiv1.ApplyResult, error)
	// ListRuntimes lists the built-in and stored runtimes project's jobs
	// may name, each with its source (builtin, stored, overridden).
	ListRuntimes(ctx context.Context, project string) ([]*apiv1.TrainingRuntime, error)
	GetRuntime(ctx context.Context, q apiv1.RuntimeQuery) (*apiv1.TrainingRuntime, error)
	DeleteRuntime(ctx context.Context, q apiv1.RuntimeQuery) error
}

// noRuntimes answers the routes of stored runtimes on a server that
// keeps none.
var noRuntimes = &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeBadRequest, "this server stores no runtimes")}

// applyAll stores the WorkflowTemplates, TrainingRuntimes and
// ClusterTrainingRuntimes of the files sent as a submission's are. Only
// a token of every project may store ClusterTrainingRuntimes.
func (s *Server) applyAll(w http.ResponseWriter, r *http.Request, p *principal) error {
	if s.cfg.Runtimes == nil {
		return noRuntimes
	}
	in, err := s.templateFiles(r, p)
	if err != nil {
		return err
	}
	in.AllProjects = p.may("*")
	release, err := s.submits.acquire(r.Context())
	if err != nil {
		return err
	}
	defer release()
	out, err := s.cfg.Runtimes.Apply(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// listRuntimes lists the built-in runtimes, and with a RuntimeKeeper the
// stored ones of the project (?project=) and of every project.
func (s *Server) listRuntimes(w http.ResponseWriter, r *http.Request, p *principal) error {
	if s.cfg.Runtimes == nil {
		return s.runtimes(w, r, p)
	}
	project, err := queryProject(r, p)
	if err != nil {
		return err
	}
	items, err := s.cfg.Runtimes.ListRuntimes(r.Context(), project)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.RuntimeList{Project: project, Items: nonNil(items)})
	return nil
}

func (s *Server) getRuntime(w http.ResponseWriter, r *http.Request, p *principal) error {
	if s.cfg.Runtimes == nil {
		return noRuntimes
	}
	q, err := runtimeQuery(r, p)
	if err != nil {
		return err
	}
	rt, err := s.cfg.Runtimes.GetRuntime(r.Context(), q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rt)
	return nil
}

func (s *Server) deleteRuntime(w http.ResponseWriter, r *http.Request, p *principal) error {
	if s.cfg.Runtimes == nil {
		return noRuntimes
	}
	q, err := runtimeQuery(r, p)
	if err != nil {
		return err
	}
	if q.Kind == apiv1.KindClusterTrainingRuntime && !p.may("*") {
		return forbidden("a ClusterTrainingRuntime is used by every project: deleting one needs a token of every project (*)")
	}
	if err := s.cfg.Runtimes.DeleteRuntime(r.Context(), q); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// runtimeQuery reads the runtime a request names: {name} in the path,
// and ?project=, ?kind= and ?version=.
func runtimeQuery(r *http.Request, p *principal) (apiv1.RuntimeQuery, error) {
	project, err := queryProject(r, p)
	if err != nil {
		return apiv1.RuntimeQuery{}, err
	}
	q := apiv1.RuntimeQuery{Project: project, Kind: r.URL.Query().Get("kind"), Name: r.PathValue("name")}
	if v := r.URL.Query().Get("version"); v != "" {
		if q.Version, err = strconv.ParseInt(v, 10, 64); err != nil || q.Version < 1 {
			return q, badRequest("version %q is not a positive whole number", v)
		}
	}
	return q, nil
}
