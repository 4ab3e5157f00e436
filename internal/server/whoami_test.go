package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestWhoamiNamesTheToken asks who each kind of caller is: a token of each
// role, none, and one the server does not know.
func TestWhoamiNamesTheToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		what, token string
		want        apiv1.Whoami
	}{
		{"admin", e.admin, apiv1.Whoami{Name: "admin", Role: "admin", Projects: []string{"*"}, Authenticated: true}},
		{"viewer", e.viewer, apiv1.Whoami{Name: "viewer", Role: "viewer", Projects: []string{"*"}, Authenticated: true}},
		{"editor of a", e.editorA, apiv1.Whoami{Name: "editor", Role: "editor", Projects: []string{"a"}, Authenticated: true}},
		{"no token", "", apiv1.Whoami{Projects: []string{}}},
		{"unknown token", e.none, apiv1.Whoami{Projects: []string{}}},
	}
	for _, c := range cases {
		resp, b := e.do(t, "GET", "/api/v1/whoami", c.token, "")
		var got apiv1.Whoami
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s (%v)", c.what, resp.StatusCode, b, err)
		}
		if got.Name != c.want.Name || got.Role != c.want.Role || got.Authenticated != c.want.Authenticated || !slices.Equal(got.Projects, c.want.Projects) {
			t.Errorf("%s: whoami = %+v, want %+v", c.what, got, c.want)
		}
		if got.Projects == nil {
			t.Errorf("%s: projects is null: %s", c.what, b)
		}
		if role := resp.Header.Get("Kiln-Role"); role != c.want.Role {
			t.Errorf("%s: Kiln-Role %q, want %q", c.what, role, c.want.Role)
		}
	}
}
