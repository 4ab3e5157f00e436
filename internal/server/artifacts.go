package server

import (
	"context"
	"fmt"
	"io"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ArtifactKeeper serves the output artifacts that runs' tasks stored in
// the artifact repository; the embedded engine (internal/app) is one.
type ArtifactKeeper interface {
	// Artifacts lists the stored artifacts of run id's tasks.
	Artifacts(ctx context.Context, id apiv1.RunID) ([]apiv1.RunArtifact, error)
	// Artifact writes the bytes of artifact name of task node of run id
	// to w: a file's bytes, or a directory as a tar stream (Dir says
	// which). KLN-4055 when the task stored no such artifact.
	Artifact(ctx context.Context, id apiv1.RunID, node, name string, w io.Writer) error
}

// listArtifacts answers the stored artifacts of a run's tasks.
func (s *Server) listArtifacts(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	if s.cfg.Artifacts == nil {
		return noArtifacts()
	}
	items, err := s.cfg.Artifacts.Artifacts(r.Context(), run.ID)
	if err != nil {
		return err
	}
	if items == nil {
		items = []apiv1.RunArtifact{}
	}
	writeJSON(w, http.StatusOK, apiv1.RunArtifactList{Items: items})
	return nil
}

// getArtifact answers one stored artifact's bytes: a file as
// application/octet-stream, a directory as application/x-tar.
func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	node, name := r.PathValue("node"), r.PathValue("name")
	if s.cfg.Artifacts == nil {
		return noArtifacts()
	}
	items, err := s.cfg.Artifacts.Artifacts(r.Context(), run.ID)
	if err != nil {
		return err
	}
	ctype := ""
	for _, a := range items {
		if a.Node == node && a.Name == name {
			ctype = "application/octet-stream"
			if a.Dir || a.Files != nil {
				ctype = "application/x-tar"
			}
		}
	}
	if ctype == "" {
		return apiv1.Errorf(apiv1.CodeNoArtifact, fmt.Sprintf("task %s of run %s stored no artifact %s", node, run.ID, name))
	}
	sw := s.newStream(w, ctype)
	err = s.cfg.Artifacts.Artifact(r.Context(), run.ID, node, name, sw)
	if err != nil && !sw.wrote {
		return err
	}
	if err != nil {
		s.cfg.Log.Warn("artifact download ended early", "run", run.ID, "node", node, "artifact", name, "err", err)
	}
	if !sw.wrote {
		_, _ = sw.Write(nil)
	}
	return nil
}

// noArtifacts answers a server configured without an ArtifactKeeper.
func noArtifacts() error {
	return &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeNoArtifact, "this server serves no artifacts")}
}
