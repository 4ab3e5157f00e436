package client

import (
	"context"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ListQuotas returns the projects' quotas the token may see.
func (c *Client) ListQuotas(ctx context.Context) ([]apiv1.ProjectQuota, error) {
	var out struct{ Items []apiv1.ProjectQuota }
	return out.Items, c.do(ctx, "GET", "/api/v1/quotas", nil, &out)
}

// DeleteQuota removes a project's quota; it needs a token of every
// project.
func (c *Client) DeleteQuota(ctx context.Context, project string) error {
	return c.do(ctx, "DELETE", "/api/v1/quotas/"+url.PathEscape(project), nil, nil)
}
