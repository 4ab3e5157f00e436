package server

import (
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const quotaDoc = "apiVersion: kiln.dev/v1alpha1\nkind: ProjectQuota\nmetadata: {name: a}\nspec: {cpu: 1}\n"

func TestQuotasAreAppliedAndDeletedOnlyByATokenOfEveryProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/api/v1/apply", "/api/v1/apply?project=a"} {
		resp, b := e.do(t, "POST", path, e.editorA, quotaDoc)
		wantError(t, "a token of project a applies a quota to "+path, resp, b, http.StatusForbidden, apiv1.CodeForbidden)
		if !strings.Contains(string(b), "a token of every project (*)") || strings.Contains(string(b), "may not touch") {
			t.Errorf("a token of project a applies a quota to %s: %s; want the rule: a token of every project", path, b)
		}
	}
	resp, b := e.do(t, "DELETE", "/api/v1/quotas/a", e.admin, "")
	wantError(t, "DELETE a quota never stored", resp, b, http.StatusNotFound, apiv1.CodeNoQuota)
	if resp, b := e.do(t, "POST", "/api/v1/apply", e.admin, quotaDoc); resp.StatusCode != http.StatusOK {
		t.Fatalf("an admin applies a quota: %d %s", resp.StatusCode, b)
	}
	resp, b = e.do(t, "DELETE", "/api/v1/quotas/a", e.editorA, "")
	wantError(t, "a token of project a deletes its quota", resp, b, http.StatusForbidden, apiv1.CodeForbidden)
	if resp, b := e.do(t, "DELETE", "/api/v1/quotas/a", e.admin, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("an admin deletes the quota: %d %s, want 204", resp.StatusCode, b)
	}
	if _, b := e.do(t, "GET", "/api/v1/quotas", e.admin, ""); !strings.Contains(string(b), `"items":[]`) {
		t.Errorf("quotas after the delete: %s; want none", b)
	}
}
