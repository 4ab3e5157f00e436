package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// GetRunHead returns a run without its nodes (status.progress counts
// them); RunNodes reads them a page at a time.
func (c *Client) GetRunHead(ctx context.Context, id apiv1.RunID) (*apiv1.Run, error) {
	var run apiv1.Run
	return &run, c.do(ctx, "GET", "/api/v1/runs/"+url.PathEscape(string(id))+"?nodes=false", nil, &run)
}

// RunNodes returns a page of a run's nodes, in the run's order, as q
// selects them: by phase, by parent (a map's items), changed since an
// earlier page's ResourceVersion; the page's Continue asks for the next.
// A SinceVersion the server cannot answer is KLN-4075 (410): list again
// without it.
func (c *Client) RunNodes(ctx context.Context, id apiv1.RunID, q apiv1.NodeQuery) (*apiv1.NodeList, error) {
	v := url.Values{}
	if len(q.Phases) > 0 {
		phases := make([]string, len(q.Phases))
		for i, p := range q.Phases {
			phases[i] = string(p)
		}
		v.Set("phase", strings.Join(phases, ","))
	}
	if q.HasParent {
		v.Set("parent", q.Parent)
	}
	setNonEmpty(v, "sinceVersion", q.SinceVersion)
	setNonEmpty(v, "continue", q.Continue)
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var list apiv1.NodeList
	return &list, c.do(ctx, "GET", "/api/v1/runs/"+url.PathEscape(string(id))+"/nodes?"+v.Encode(), nil, &list)
}

// EventPage returns a run's events as q selects them: all after q.After,
// the last q.Tail, or a page of q.Limit (its Continue asks for the next),
// with how many there are in all when a tail or a limit is asked.
func (c *Client) EventPage(ctx context.Context, id apiv1.RunID, q apiv1.EventQuery) (*apiv1.EventList, error) {
	v := url.Values{"after": {strconv.FormatInt(q.After, 10)}}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Tail > 0 {
		v.Set("tail", strconv.Itoa(q.Tail))
	}
	setNonEmpty(v, "continue", q.Continue)
	var list apiv1.EventList
	return &list, c.do(ctx, "GET", "/api/v1/runs/"+url.PathEscape(string(id))+"/events?"+v.Encode(), nil, &list)
}

func setNonEmpty(v url.Values, key, value string) {
	if value != "" {
		v.Set(key, value)
	}
}
