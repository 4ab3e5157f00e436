package client

import (
	"context"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Whoami is who the client's token names on the server (GET
// /api/v1/whoami).
type Whoami = apiv1.Whoami

// Whoami asks the server who the client's token names. A missing or
// unknown token is no error: Authenticated says so.
func (c *Client) Whoami(ctx context.Context) (Whoami, error) {
	var out Whoami
	return out, c.do(ctx, "GET", "/api/v1/whoami", nil, &out)
}
