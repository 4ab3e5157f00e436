package server

import (
	"context"
	"net/http"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// CacheKeeper keeps the stored results of cached tasks; the embedded
// engine (internal/app) is one. Errors are coded: KLN-4025 for a key
// that names no entry, KLN-1012 for one that names several, KLN-1009 and
// KLN-1010 for a prune's olderThan and maxSize.
type CacheKeeper interface {
	// CacheEntries lists the entries q selects (of every project when
	// q.Project is empty), most recently used first.
	CacheEntries(ctx context.Context, q apiv1.CacheQuery) ([]*apiv1.CacheEntry, error)
	// RemoveCacheEntries removes the entries keys name (whole, or by a
	// prefix of at least 8 hex digits) from project's, of every project
	// when empty; all or none.
	RemoveCacheEntries(ctx context.Context, project string, keys []string) (apiv1.CachePruned, error)
	// PruneCache removes the entries p selects and every expired one.
	PruneCache(ctx context.Context, p apiv1.CachePrune) (apiv1.CachePruned, error)
}

// cacheKeeper is the server's CacheKeeper, or a 404 when it has none.
func (s *Server) cacheKeeper() (CacheKeeper, error) {
	if s.cfg.Cache == nil {
		return nil, &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeBadRequest, "this server keeps no cache")}
	}
	return s.cfg.Cache, nil
}

// listCache lists the entries of ?project= (default: every project the
// caller may read), filtered by ?workflow= and ?task=.
func (s *Server) listCache(w http.ResponseWriter, r *http.Request, p *principal) error {
	c, err := s.cacheKeeper()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	query := apiv1.CacheQuery{Project: q.Get("project"), Workflow: q.Get("workflow"), Task: q.Get("task")}
	if query.Project != "" && !p.may(query.Project) {
		return forbidden("the token may not read project %q", query.Project)
	}
	entries, err := c.CacheEntries(r.Context(), query)
	if err != nil {
		return err
	}
	items := make([]*apiv1.CacheEntry, 0, len(entries))
	for _, e := range entries {
		if p.may(e.Project) {
			items = append(items, e)
		}
	}
	writeJSON(w, http.StatusOK, apiv1.CacheEntryList{Items: items})
	return nil
}

// deleteCacheEntry removes the entry the path's key names, of ?project=
// if set. An entry of a project the caller may not touch is answered as
// one that does not exist.
func (s *Server) deleteCacheEntry(w http.ResponseWriter, r *http.Request, p *principal) error {
	c, err := s.cacheKeeper()
	if err != nil {
		return err
	}
	projects := []string{r.URL.Query().Get("project")}
	switch {
	case projects[0] != "" && !p.may(projects[0]):
		return forbidden("the token may not touch project %q", projects[0])
	case projects[0] == "" && !p.may("*"):
		projects = p.projects
	}
	key := r.PathValue("key")
	for _, project := range projects {
		out, err := c.RemoveCacheEntries(r.Context(), project, []string{key})
		if apiv1.CodeOf(err) == apiv1.CodeNoCacheEntry {
			continue
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	return &apiv1.Error{Code: apiv1.CodeNoCacheEntry, Field: "key", Message: "no cache entry the token may touch has key " + key}
}

// pruneCache removes the entries the body (apiv1.CachePrune) selects. A
// token not scoped to every project prunes one of its projects at a time.
func (s *Server) pruneCache(w http.ResponseWriter, r *http.Request, p *principal) error {
	c, err := s.cacheKeeper()
	if err != nil {
		return err
	}
	var in apiv1.CachePrune
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	switch {
	case in.Project != "" && !p.may(in.Project):
		return forbidden("the token may not touch project %q", in.Project)
	case in.Project == "" && !p.may("*"):
		return forbidden("the token may prune only its projects (%s): name one in project", strings.Join(p.projects, ", "))
	}
	out, err := c.PruneCache(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
