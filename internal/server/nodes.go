package server

import (
	"fmt"
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
	list, err := store.NodeList(r.Context(), s.cfg.Store, run.ID, q)
	if err != nil {
		return err
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
			return q, badParam("limit", fmt.Sprintf("ask for 1 to %d nodes a page (without limit, %d), and for the next page with the answer's continue",
				apiv1.MaxNodePage, apiv1.DefaultNodePage), "limit %q is not a number from 1 to %d", s, apiv1.MaxNodePage)
		}
		q.Limit = n
	}
	return q, nil
}
