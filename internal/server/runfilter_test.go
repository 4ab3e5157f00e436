package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The list's filters take what people type: phases in any case and
// several at once, durations as well as times, a search, either order;
// a phase that does not exist is refused with the phases that do.
func TestRunListFiltersAsTyped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := e.submit(t, e.admin, "")
	second := e.submit(t, e.admin, "")
	for query, want := range map[string][]apiv1.RunID{
		"?phase=pending,RUNNING,succeeded,failed&since=1h": {second.ID, first.ID},
		"?order=asc": {first.ID, second.ID},
		"?q=" + string(second.ID[len(second.ID)-4:]): {second.ID},
		"?until=2000-01-01T00:00:00Z":                {},
		"?since=2099-01-01T00:00:00Z":                {},
		"?order=asc&limit=1":                         {first.ID},
	} {
		resp, body := e.do(t, "GET", "/api/v1/runs"+query, e.admin, "")
		var page apiv1.RunList
		if err := json.Unmarshal(body, &page); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", query, resp.StatusCode, body)
		}
		got := []apiv1.RunID{}
		for _, r := range page.Items {
			got = append(got, r.ID)
		}
		if strings.Join(runIDs(got), " ") != strings.Join(runIDs(want), " ") {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}
	resp, body := e.do(t, "GET", "/api/v1/runs?phase=running,Done", e.admin, "")
	wantError(t, "an unknown phase", resp, body, http.StatusBadRequest, apiv1.CodeUnknownPhase)
	if !strings.Contains(string(body), `\"Done\"`) || !strings.Contains(string(body), "Cancelling") {
		t.Errorf("an unknown phase: %s, want it named beside the phases there are", body)
	}
	resp, body = e.do(t, "GET", "/api/v1/runs?since=yesterday", e.admin, "")
	wantError(t, "a malformed since", resp, body, http.StatusBadRequest, apiv1.CodeBadTime)
	resp, body = e.do(t, "GET", "/api/v1/runs?order=up", e.admin, "")
	wantError(t, "a malformed order", resp, body, http.StatusBadRequest, apiv1.CodeBadRequest)
}

func runIDs(ids []apiv1.RunID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}
