package client

import (
	"context"
	"encoding/json"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Rerun asks the server for a new run of run id's stored spec: from, only
// or until one of its top-level tasks, as req says. It returns the new
// run. KLN-4020 when req.Node is not a top-level task of the run.
func (c *Client) Rerun(ctx context.Context, id apiv1.RunID, req apiv1.RerunRequest) (*apiv1.Run, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var run apiv1.Run
	return &run, c.doType(ctx, "POST", "/api/v1/runs/"+url.PathEscape(string(id))+"/rerun", "application/json", b, &run)
}
