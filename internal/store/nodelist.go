package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// NodeList is the page of run id's nodes that q asks for, as the API
// answers it: its resourceVersion is the run's node version when its
// listing began, its continue token the next page's. A sinceVersion that
// is not a version of the run is KLN-4075, a continue token r did not
// give for q KLN-4076.
func NodeList(ctx context.Context, r Runs, id apiv1.RunID, q apiv1.NodeQuery) (*apiv1.NodeList, error) {
	params, version, err := nodeParams(id, q)
	if err != nil {
		return nil, err
	}
	page, err := r.ListNodes(ctx, params)
	if err != nil {
		return nil, err
	}
	if params.Since != nil && *params.Since > page.Version {
		return nil, staleVersion(q.SinceVersion, page.Version)
	}
	if version < 0 { // a first page: the listing's version is its own
		version = page.Version
	}
	list := &apiv1.NodeList{
		Run: id, ResourceVersion: strconv.FormatInt(version, 10), Items: nonNil(page.Nodes),
		RemainingItemCount: page.Remaining, Counts: page.Counts,
	}
	if page.Remaining > 0 {
		list.Continue = nodeContinue{pos: page.Last, version: version, query: queryKey(q)}.String()
	}
	return list, nil
}

// nodeParams is what the store is asked for q, and the version of the
// listing a continued page belongs to (-1 for a first page).
func nodeParams(run apiv1.RunID, q apiv1.NodeQuery) (ListNodesParams, int64, error) {
	p := ListNodesParams{Run: run, Phases: q.Phases, After: -1, Limit: q.Limit}
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

// staleVersion is KLN-4075 for a sinceVersion the run's store
// never gave: not a version, or one past the run's (a store replaced or
// restored from a backup since).
func staleVersion(v string, now int64) error {
	msg := fmt.Sprintf("sinceVersion %q is not a version of this run's nodes", v)
	if now >= 0 {
		msg = fmt.Sprintf("sinceVersion %q is past this run's nodes' version %d (the store was replaced or restored since)", v, now)
	}
	return &apiv1.Error{Code: apiv1.CodeStaleVersion, Field: "sinceVersion", Message: msg + ": list the nodes again without it"}
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
// store did not give for that query.
func parseNodeContinue(q apiv1.NodeQuery) (nodeContinue, error) {
	var c nodeContinue
	raw, err := base64.RawURLEncoding.DecodeString(q.Continue)
	if err == nil {
		_, err = fmt.Sscanf(string(raw), "%d.%d.%x", &c.pos, &c.version, &c.query)
	}
	if err != nil || c.pos < 0 || c.version < 0 || c.query != queryKey(q) {
		return c, &apiv1.Error{
			Code: apiv1.CodeBadContinue, Field: "continue",
			Message: fmt.Sprintf("continue %q is not one this server gave for this run and query (the same phase, parent and sinceVersion)", q.Continue),
		}
	}
	return c, nil
}

// queryKey hashes what a query selects, but not its page.
func queryKey(q apiv1.NodeQuery) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%v|%t|%s|%s", q.Phases, q.HasParent, q.Parent, q.SinceVersion)
	return h.Sum64()
}
