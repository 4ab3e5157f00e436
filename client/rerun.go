package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Rerun asks the server for a new run of run id's stored spec: from, only
// or until one of its top-level tasks, as req says. It returns the new
// run. KLN-4020 when req.Node is not a top-level task of the run. It
// carries an idempotency key (req.IdempotencyKey, else a new one) and is
// sent again with it as a submission is (see Submit): one rerun results.
func (c *Client) Rerun(ctx context.Context, id apiv1.RunID, req apiv1.RerunRequest) (*apiv1.Run, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	key := req.IdempotencyKey
	if key == "" {
		key = newKey()
	}
	run, _, err := c.postRetrying(ctx, "/api/v1/runs/"+url.PathEscape(string(id))+"/rerun", b,
		http.Header{"Content-Type": {"application/json"}, "Idempotency-Key": {key}})
	return run, err
}
