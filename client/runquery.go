package client

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runQueryValues are the parameters of GET /api/v1/runs that ask for q.
func runQueryValues(q apiv1.RunQuery) url.Values {
	v := url.Values{}
	phases := make([]string, 0, len(q.Phases)+1)
	if q.Phase != "" {
		phases = append(phases, string(q.Phase))
	}
	for _, p := range q.Phases {
		phases = append(phases, string(p))
	}
	for k, s := range map[string]string{
		"phase": strings.Join(phases, ","), "name": q.Name, "label": q.Label, "project": q.Project,
		"cursor": q.Cursor, "q": q.Search,
	} {
		if s != "" {
			v.Set(k, s)
		}
	}
	for k, t := range map[string]time.Time{"since": q.Since, "until": q.Until} {
		if !t.IsZero() {
			v.Set(k, t.UTC().Format(time.RFC3339Nano))
		}
	}
	if q.Ascending {
		v.Set("order", "asc")
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}
