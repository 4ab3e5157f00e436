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
	// CacheArtifact writes artifact name of the cache entry key names
	// (whole or by a prefix of 8 or more hex digits) of project's (every
	// project's when empty) to w, as Artifact does. KLN-4025 for a key
	// that names no entry, KLN-4055 for a name it does not hold.
	CacheArtifact(ctx context.Context, project, key, name string, w io.Writer) error
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

// getCacheArtifact answers one artifact of a cache entry, of ?project= if
// set; an entry of a project the caller may not read is answered as one
// that does not exist.
func (s *Server) getCacheArtifact(w http.ResponseWriter, r *http.Request, p *principal) error {
	if s.cfg.Artifacts == nil {
		return noArtifacts()
	}
	projects := []string{r.URL.Query().Get("project")}
	switch {
	case projects[0] != "" && !p.may(projects[0]):
		return forbidden("the token may not read project %q", projects[0])
	case projects[0] == "" && !p.may("*"):
		projects = p.projects
	}
	key, name := r.PathValue("key"), r.PathValue("name")
	for _, project := range projects {
		sw := s.newStream(w, "application/octet-stream")
		err := s.cfg.Artifacts.CacheArtifact(r.Context(), project, key, name, sw)
		if apiv1.CodeOf(err) == apiv1.CodeNoCacheEntry && !sw.wrote {
			continue
		}
		if err != nil && !sw.wrote {
			return err
		}
		if err != nil {
			s.cfg.Log.Warn("cache artifact download ended early", "key", key, "artifact", name, "err", err)
		}
		if !sw.wrote {
			_, _ = sw.Write(nil)
		}
		return nil
	}
	return &apiv1.Error{Code: apiv1.CodeNoCacheEntry, Field: "key", Message: "no cache entry the token may read has key " + key}
}
