package client

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ListQuotas returns the projects' quotas the token may see.
func (c *Client) ListQuotas(ctx context.Context) ([]apiv1.ProjectQuota, error) {
	var out struct{ Items []apiv1.ProjectQuota }
	return out.Items, c.do(ctx, "GET", "/api/v1/quotas", nil, &out)
}
