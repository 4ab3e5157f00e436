package client

import (
	"context"
	"encoding/json"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// CacheEntries lists the stored results q selects, most recently used
// first; without q.Project, those of every project the token may read.
func (c *Client) CacheEntries(ctx context.Context, q apiv1.CacheQuery) ([]*apiv1.CacheEntry, error) {
	v := url.Values{}
	for k, s := range map[string]string{"project": q.Project, "workflow": q.Workflow, "task": q.Task} {
		if s != "" {
			v.Set(k, s)
		}
	}
	path := "/api/v1/cache"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out struct{ Items []*apiv1.CacheEntry }
	return out.Items, c.do(ctx, "GET", path, nil, &out)
}

// RemoveCacheEntries removes the stored results keys name (whole, or by a
// prefix of at least 8 hex digits), of project if set, and the bytes no
// other entry needs. They are removed one key at a time: KLN-4025 for a
// key that names no entry the token may touch, or KLN-1012 for one that
// names several, stops there, and what the keys before it removed is
// returned with the error.
func (c *Client) RemoveCacheEntries(ctx context.Context, project string, keys []string) (apiv1.CachePruned, error) {
	var sum apiv1.CachePruned
	for _, k := range keys {
		path := "/api/v1/cache/" + url.PathEscape(k)
		if project != "" {
			path += "?project=" + url.QueryEscape(project)
		}
		var out apiv1.CachePruned
		if err := c.do(ctx, "DELETE", path, nil, &out); err != nil {
			return sum, err
		}
		sum.Entries += out.Entries
		sum.Bytes += out.Bytes
	}
	return sum, nil
}

// PruneCache removes the stored results p selects, and every expired one,
// and says how much went.
func (c *Client) PruneCache(ctx context.Context, p apiv1.CachePrune) (apiv1.CachePruned, error) {
	var out apiv1.CachePruned
	b, err := json.Marshal(p)
	if err != nil {
		return out, err
	}
	return out, c.doType(ctx, "POST", "/api/v1/cache/prune", "application/json", b, &out)
}
