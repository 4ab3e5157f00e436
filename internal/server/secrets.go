package server

import (
	"context"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// SecretKeeper keeps the secrets task environments reference; the
// embedded engine (internal/app) is one. Values go in, never out.
type SecretKeeper interface {
	SetSecret(ctx context.Context, project, name, value string) error
	SecretNames(ctx context.Context, project string) ([]string, error)
	DeleteSecret(ctx context.Context, project, name string) error
}

// queryProject is the ?project= of a route of a project's secrets or
// templates ("default" when unset), checked against the caller.
func queryProject(r *http.Request, p *principal) (string, error) {
	project := r.URL.Query().Get("project")
	if project == "" {
		project = "default"
	}
	if !p.may(project) {
		return "", forbidden("the token may not touch project %q", project)
	}
	return project, nil
}

// listSecrets returns a project's secret names; values never leave the server.
func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := queryProject(r, p)
	if err != nil {
		return err
	}
	names, err := s.cfg.Secrets.SecretNames(r.Context(), project)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.SecretList{Project: project, Items: nonNil(names)})
	return nil
}

// putSecret sets a secret to the request body.
func (s *Server) putSecret(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := queryProject(r, p)
	if err != nil {
		return err
	}
	value, err := readBody(r.Body)
	if err != nil {
		return err
	}
	if err := s.cfg.Secrets.SetSecret(r.Context(), project, r.PathValue("name"), string(value)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := queryProject(r, p)
	if err != nil {
		return err
	}
	if err := s.cfg.Secrets.DeleteSecret(r.Context(), project, r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
