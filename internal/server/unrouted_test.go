package server

import (
	"net/http"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A path no route takes is 404 and a method its route does not take is
// 405 with Allow: both JSON with their code, as every other error is.
func TestUnroutedRequestsAreCodedJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		method, path string
		status       int
		code         apiv1.Code
		allow        string
	}{
		{"GET", "/api/v1/nope", http.StatusNotFound, apiv1.CodeNoRoute, ""},
		{"GET", "/api/v2/runs", http.StatusNotFound, apiv1.CodeNoRoute, ""},
		{"PUT", "/api/v1/runs", http.StatusMethodNotAllowed, apiv1.CodeMethod, "GET, HEAD, POST"},
		{"DELETE", "/healthz", http.StatusMethodNotAllowed, apiv1.CodeMethod, "GET, HEAD"},
	} {
		resp, body := e.do(t, tc.method, tc.path, e.admin, "")
		wantError(t, tc.method+" "+tc.path, resp, body, tc.status, tc.code)
		if got := resp.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json", tc.method, tc.path, ct)
		}
	}
}
