package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const sleeperYAML = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: sleeper}
spec:
  tasks:
  - {name: nap, command: [sleep, "60"]}
`

func TestDeleteRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	done := e.submit(t, e.admin, "")
	e.waitDone(t, done.ID)
	path := "/api/v1/runs/" + string(done.ID)
	if resp, b := e.do(t, "DELETE", path, e.viewer, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("DELETE by a viewer = %d %s, want 403", resp.StatusCode, b)
	}
	resp, b := e.do(t, "DELETE", path+"?force=maybe", e.admin, "")
	wantError(t, "DELETE ?force=maybe", resp, b, http.StatusBadRequest, apiv1.CodeBadRequest)
	if resp, b := e.do(t, "DELETE", path, e.admin, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE = %d %s, want 200", resp.StatusCode, b)
	}
	resp, b = e.do(t, "GET", path, e.admin, "")
	wantError(t, "GET of a deleted run", resp, b, http.StatusNotFound, apiv1.CodeRunNotFound)
	resp, b = e.do(t, "DELETE", path, e.admin, "")
	wantError(t, "DELETE of a deleted run", resp, b, http.StatusNotFound, apiv1.CodeRunNotFound)

	resp, b = e.do(t, "POST", "/api/v1/runs", e.admin, sleeperYAML)
	var sleeper apiv1.Run
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &sleeper) != nil {
		t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	path = "/api/v1/runs/" + string(sleeper.ID)
	resp, b = e.do(t, "DELETE", path, e.admin, "")
	wantError(t, "DELETE of a running run", resp, b, http.StatusConflict, apiv1.CodeRunPhase)
	if resp, b := e.do(t, "DELETE", path+"?force=true", e.admin, ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE ?force=true = %d %s, want 200", resp.StatusCode, b)
	}
	resp, b = e.do(t, "GET", path, e.admin, "")
	wantError(t, "GET of a run deleted with force", resp, b, http.StatusNotFound, apiv1.CodeRunNotFound)
	if _, b := e.do(t, "GET", "/metrics", e.admin, ""); !strings.Contains(string(b), `kiln_runs_deleted_total{reason="request"} 2`) {
		t.Errorf("/metrics does not count the two runs deleted on request:\n%s", b)
	}
}
