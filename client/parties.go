package client

import (
	"context"
	"encoding/json"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// AddParty registers a party on the server, or updates it (an admin
// token's work). The credential the server issued to the party, when it
// issued one now, is in the answer, this once.
func (c *Client) AddParty(ctx context.Context, req apiv1.PartyRequest) (*apiv1.PartyAdded, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out apiv1.PartyAdded
	if err := c.doType(ctx, "PUT", "/api/v1/parties/"+url.PathEscape(req.Name), "application/json", b, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Parties lists the parties the server federates with, never their credentials.
func (c *Client) Parties(ctx context.Context) ([]apiv1.Party, error) {
	var out struct{ Items []apiv1.Party }
	return out.Items, c.do(ctx, "GET", "/api/v1/parties", nil, &out)
}

// RemoveParty makes the server forget a party; KLN-7003 if it knows none by that name.
func (c *Client) RemoveParty(ctx context.Context, name string) error {
	return c.do(ctx, "DELETE", "/api/v1/parties/"+url.PathEscape(name), nil, nil)
}
