package server

import (
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// secretProject is the ?project= of a secrets route, checked against the caller.
func secretProject(r *http.Request, p *principal) (string, error) {
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
	project, err := secretProject(r, p)
	if err != nil {
		return err
	}
	names, err := s.cfg.Store.SecretNames(r.Context(), project)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"project": project, "items": names})
	return nil
}

// putSecret sets a secret to the request body.
func (s *Server) putSecret(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := secretProject(r, p)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return badRequest("%q is not a secret name", name)
	}
	value, err := io.ReadAll(r.Body)
	if err != nil {
		return badRequest("reading the body: %v", err)
	}
	if err := s.cfg.Store.SetSecret(r.Context(), project, name, string(value)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request, p *principal) error {
	project, err := secretProject(r, p)
	if err != nil {
		return err
	}
	if err := s.cfg.Store.DeleteSecret(r.Context(), project, r.PathValue("name")); err != nil {
		return &httpError{http.StatusNotFound, apiv1.Errorf(apiv1.CodeSecret, "no such secret")}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
