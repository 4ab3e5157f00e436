package client

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Version returns the build of the kiln the client talks to.
func (c *Client) Version(ctx context.Context) (apiv1.Version, error) {
	var out apiv1.Version
	return out, c.do(ctx, "GET", "/api/v1/version", nil, &out)
}
