package server

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// listNodes answers a page of a run's nodes, in the run's order
// (GET /api/v1/runs/{id}/nodes): ?phase= and ?parent= filter them,
// ?limit= and ?continue= page them, ?sinceVersion= keeps those that
// changed since an earlier answer's resourceVersion (see nodeVersions).
func (s *Server) listNodes(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	q, err := nodeQuery(r)
	if err != nil {
		return err
	}
	page, err := s.nodePage(run, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
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

// nodePage is the page of run's nodes that q asks for. Every request
// records the nodes' versions, so that the resourceVersion it answers
// with can be asked about later.
func (s *Server) nodePage(run *apiv1.Run, q apiv1.NodeQuery) (*apiv1.NodeList, error) {
	snap := s.versions.observe(run)
	since := int64(-1)
	if q.SinceVersion != "" {
		v, err := s.versions.parse(run.ID, q.SinceVersion)
		if err != nil {
			return nil, err
		}
		since = v
	}
	start, version := 0, snap.version
	if q.Continue != "" {
		tok, err := parseNodeContinue(q, len(run.Status.Nodes))
		if err != nil {
			return nil, err
		}
		start, version = tok.pos, tok.version
	}
	list := &apiv1.NodeList{Run: run.ID, Items: []apiv1.NodeStatus{}, Counts: map[apiv1.Phase]int{}}
	last := -1
	for i := range run.Status.Nodes {
		n := &run.Status.Nodes[i]
		if q.HasParent && n.Parent != q.Parent {
			continue
		}
		list.Counts[n.Phase]++
		if i < start || (len(q.Phases) > 0 && !slices.Contains(q.Phases, n.Phase)) || snap.versions[i] <= since {
			continue
		}
		if len(list.Items) < q.Limit {
			list.Items = append(list.Items, *n)
			last = i
			continue
		}
		list.RemainingItemCount++
	}
	list.ResourceVersion = s.versions.format(version)
	if list.RemainingItemCount > 0 {
		list.Continue = nodeContinue{pos: last + 1, version: version, query: queryKey(q)}.String()
	}
	return list, nil
}

// nodeContinue is where the next page of a listing of nodes starts: the
// position of its first node in the run's order, the version of the
// listing's first page, and the hash of the query, which the next page
// must ask again.
type nodeContinue struct {
	pos     int
	version int64
	query   uint64
}

func (c nodeContinue) String() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d.%x", c.pos, c.version, c.query))
}

// parseNodeContinue reads q's continue token, for a run of n nodes;
// KLN-4076 for one this server did not give for that query.
func parseNodeContinue(q apiv1.NodeQuery, n int) (nodeContinue, error) {
	var c nodeContinue
	raw, err := base64.RawURLEncoding.DecodeString(q.Continue)
	if err == nil {
		_, err = fmt.Sscanf(string(raw), "%d.%d.%x", &c.pos, &c.version, &c.query)
	}
	if err != nil || c.pos < 0 || c.pos > n || c.query != queryKey(q) {
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
