package server

import (
	"net/http"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The logs API reads since as the runs list does: an RFC 3339 time or a
// duration before now, and a bad one is answered with the same code.
func TestLogsSinceTakesADurationAsTheRunsListDoes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wf := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: said}\n" +
		"spec: {tasks: [{name: t, command: [sh, -c, 'echo one; echo two']}]}\n"
	resp, b := e.do(t, "POST", "/api/v1/runs", e.admin, wf)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	id := runID(t, b)
	e.waitDone(t, id)
	logs := "/api/v1/runs/" + string(id) + "/tasks/t/logs"
	for since, want := range map[string]string{"10m": "one\ntwo\n", "2099-01-01T00:00:00Z": ""} {
		resp, b := e.do(t, "GET", logs+"?since="+since, e.viewer, "")
		if resp.StatusCode != http.StatusOK || string(b) != want {
			t.Errorf("since=%s: %d %q, want 200 %q", since, resp.StatusCode, b, want)
		}
	}
	resp, b = e.do(t, "GET", logs+"?since=yesterday", e.viewer, "")
	wantError(t, "a malformed since", resp, b, http.StatusBadRequest, apiv1.CodeBadTime)
}
