package client

import (
	"context"
	"net/url"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Apply sends the WorkflowTemplates, TrainingRuntimes and
// ClusterTrainingRuntimes of in.Files, file by file, for the server to
// check and store in in.Project (the cluster ones for every project),
// and says what it did with each. Nothing is stored when any is invalid.
func (c *Client) Apply(ctx context.Context, in apiv1.TemplateApply) (*apiv1.ApplyResult, error) {
	body, contentType, err := multipartFiles(in.Files, map[string][]string{"project": nonEmpty(in.Project)})
	if err != nil {
		return nil, err
	}
	out := &apiv1.ApplyResult{}
	if err := c.doType(ctx, "POST", "/api/v1/apply", contentType, body, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ListRuntimes lists the built-in runtimes and those stored for project's
// jobs, each with its source (builtin, stored, overridden).
func (c *Client) ListRuntimes(ctx context.Context, project string) ([]*apiv1.TrainingRuntime, error) {
	var out struct{ Items []*apiv1.TrainingRuntime }
	return out.Items, c.do(ctx, "GET", "/api/v1/runtimes?project="+url.QueryEscape(project), nil, &out)
}

// GetRuntime returns one runtime; KLN-4028 if there is none.
func (c *Client) GetRuntime(ctx context.Context, q apiv1.RuntimeQuery) (*apiv1.TrainingRuntime, error) {
	var rt apiv1.TrainingRuntime
	if err := c.do(ctx, "GET", runtimePath(q), nil, &rt); err != nil {
		return nil, err
	}
	return &rt, nil
}

// DeleteRuntime removes a stored runtime; KLN-4028 if there is none,
// KLN-4029 for a built-in one.
func (c *Client) DeleteRuntime(ctx context.Context, q apiv1.RuntimeQuery) error {
	return c.do(ctx, "DELETE", runtimePath(q), nil, nil)
}

func runtimePath(q apiv1.RuntimeQuery) string {
	v := url.Values{"project": nonEmpty(q.Project)}
	if q.Kind != "" {
		v.Set("kind", q.Kind)
	}
	if q.Version > 0 {
		v.Set("version", strconv.FormatInt(q.Version, 10))
	}
	return "/api/v1/runtimes/" + url.PathEscape(q.Name) + "?" + v.Encode()
}
