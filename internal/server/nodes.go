package server

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// listNodes answers a page of a run's nodes, in the run's order
// (GET /api/v1/runs/{id}/nodes): ?phase= and ?parent= filter them,
// ?limit= and ?continue= page them, ?sinceVersion= keeps those that
// changed since an earlier answer's resourceVersion (the run's node
// version in the store, see store.NodePage).
func (s *Server) listNodes(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.runHead(r, p)
	if err != nil {
		return err
	}
	q, err := nodeQuery(r)
	if err != nil {
		return err
	}
	params, version, err := nodeParams(run.ID, q)
	if err != nil {
		return err
	}
	page, err := s.cfg.Store.ListNodes(r.Context(), params)
	if err != nil {
		return err
	}
	if params.Since != nil && *params.Since > page.Version {
		return staleVersion(q.SinceVersion, page.Version)
	}
	if version < 0 { // a first page: the listing's version is its own
		version = page.Version
	}
	list := &apiv1.NodeList{Run: run.ID, ResourceVersion: strconv.FormatInt(version, 10), Items: nonNil(page.Nodes),
		RemainingItemCount: page.Remaining, Counts: page.Counts}
	if page.Remaining > 0 {
		list.Continue = nodeContinue{pos: page.Last, version: version, query: queryKey(q)}.String()
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// nodeQuery reads the parameters of a request for a page of nodes.
func nodeQuery(r *http.Request) (apiv1.NodeQuery, error) {
	v := r.URL.Query()
	q := apiv1.NodeQuery{Parent: v.Get("parent"), HasParent: v.Has("parent"), SinceVersion: v.Get("sinceVersion"), Continue: v.Get("continue")}
	phases, err := apiv1.ParseNodePhases(strings.Join(v["phase"], ","))
	if err != nil {
		return q, &httpError{status: http.StatusBadRequest, err: apiv1.Errors(err)[0]}
	}
	q.Phases = phases
	q.Limit = apiv1.DefaultNodePage
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > apiv1.MaxNodePage {
			return q, badRequest("limit %q is not a number from 1 to %d", s, apiv1.MaxNodePage)
		}
		q.Limit = n
	}
	return q, nil
}

// nodeParams is what the store is asked for q, and the version of the
// listing a continued page belongs to (-1 for a first page).
func nodeParams(run apiv1.RunID, q apiv1.NodeQuery) (store.ListNodesParams, int64, error) {
	p := store.ListNodesParams{Run: run, Phases: q.Phases, After: -1, Limit: q.Limit}
	if q.HasParent {
		p.Parent = &q.Parent
	}
	if q.SinceVersion != "" {
		v, err := strconv.ParseInt(q.SinceVersion, 10, 64)
		if err != nil || v < 0 {
			return p, 0, staleVersion(q.SinceVersion, -1)
		}
		p.Since = &v
	}
	if q.Continue == "" {
		return p, -1, nil
	}
	c, err := parseNodeContinue(q)
	if err != nil {
		return p, 0, err
	}
	p.After = c.pos
	return p, c.version, nil
}

// staleVersion is KLN-4075 (410) for a sinceVersion the run's store
// never gave: not a version, or one past the run's (a store replaced or
// restored from a backup since).
func staleVersion(v string, now int64) error {
	msg := fmt.Sprintf("sinceVersion %q is not a version of this run's nodes", v)
	if now >= 0 {
		msg = fmt.Sprintf("sinceVersion %q is past this run's nodes' version %d (the store was replaced or restored since)", v, now)
	}
	return &httpError{status: http.StatusGone, err: &apiv1.Error{Code: apiv1.CodeStaleVersion, Field: "sinceVersion", Message: msg + ": list the nodes again without it"}}
}

// nodeContinue is where the next page of a listing of nodes starts:
// after the position of the last node of the page before, with the
// version of the listing's first page and the hash of the query, which
// the next page must ask again.
type nodeContinue struct {
	pos     int
	version int64
	query   uint64
}

func (c nodeContinue) String() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d.%x", c.pos, c.version, c.query))
}

// parseNodeContinue reads q's continue token; KLN-4076 for one this
// server did not give for that query.
func parseNodeContinue(q apiv1.NodeQuery) (nodeContinue, error) {
	var c nodeContinue
	raw, err := base64.RawURLEncoding.DecodeString(q.Continue)
	if err == nil {
		_, err = fmt.Sscanf(string(raw), "%d.%d.%x", &c.pos, &c.version, &c.query)
	}
	if err != nil || c.pos < 0 || c.version < 0 || c.query != queryKey(q) {
		return c, &httpError{status: http.StatusBadRequest, err: &apiv1.Error{Code: apiv1.CodeBadContinue, Field: "continue",
			Message: fmt.Sprintf("continue %q is not one this server gave for this run and query (the same phase, parent and sinceVersion)", q.Continue)}}
	}
	return c, nil
}

// queryKey hashes what a query selects, but not its page.
func queryKey(q apiv1.NodeQuery) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%v|%t|%s|%s", q.Phases, q.HasParent, q.Parent, q.SinceVersion)
	return h.Sum64()
}
