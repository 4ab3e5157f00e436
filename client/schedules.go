package client

import (
	"context"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ListSchedules lists a project's Schedules, each with its unfinished
// runs and next tick. Schedules are stored with Apply.
func (c *Client) ListSchedules(ctx context.Context, project string) ([]*apiv1.Schedule, error) {
	var out struct{ Items []*apiv1.Schedule }
	return out.Items, c.do(ctx, "GET", "/api/v1/schedules?project="+url.QueryEscape(project), nil, &out)
}

// GetSchedule returns a Schedule of project; KLN-3094 if there is none.
func (c *Client) GetSchedule(ctx context.Context, project, name string) (*apiv1.Schedule, error) {
	var s apiv1.Schedule
	return &s, c.do(ctx, "GET", "/api/v1/schedules/"+url.PathEscape(name)+"?project="+url.QueryEscape(project), nil, &s)
}

// DeleteSchedule removes a Schedule of project; KLN-3094 if there is
// none. The runs it started stay.
func (c *Client) DeleteSchedule(ctx context.Context, project, name string) error {
	return c.do(ctx, "DELETE", "/api/v1/schedules/"+url.PathEscape(name)+"?project="+url.QueryEscape(project), nil, nil)
}

// SuspendSchedule sets whether a Schedule of project starts runs, and
// returns it; KLN-3094 if there is none.
func (c *Client) SuspendSchedule(ctx context.Context, project, name string, suspend bool) (*apiv1.Schedule, error) {
	verb := map[bool]string{true: "suspend", false: "unsuspend"}[suspend]
	var s apiv1.Schedule
	return &s, c.do(ctx, "POST", "/api/v1/schedules/"+url.PathEscape(name)+"/"+verb+"?project="+url.QueryEscape(project), nil, &s)
}
