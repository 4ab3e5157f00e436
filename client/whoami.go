package client

import "context"

// Whoami is who the client's token names on the server (GET
// /api/v1/whoami).
type Whoami struct {
	// Name is the token's name; empty without a known token.
	Name string `json:"name"`
	// Role is viewer, editor or admin; empty without a known token.
	Role string `json:"role"`
	// Projects are those the token may touch; "*" is every project.
	Projects []string `json:"projects"`
	// Authenticated says the server knows the token and it is not revoked.
	Authenticated bool `json:"authenticated"`
}

// Whoami asks the server who the client's token names. A missing or
// unknown token is no error: Authenticated says so.
func (c *Client) Whoami(ctx context.Context) (Whoami, error) {
	var out Whoami
	return out, c.do(ctx, "GET", "/api/v1/whoami", nil, &out)
}
