package client

import (
	"context"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Messages returns the federation channel's log of a party's part: every
// message its shares sent and received, without their bytes.
func (c *Client) Messages(ctx context.Context, id apiv1.RunID) ([]apiv1.ChannelMessage, error) {
	var out apiv1.ChannelLog
	err := c.do(ctx, "GET", "/api/v1/runs/"+url.PathEscape(string(id))+"/messages", nil, &out)
	return out.Items, err
}
