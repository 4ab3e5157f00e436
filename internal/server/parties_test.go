package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestPartiesAreAnAdminsToManageAndNeverListTheirCredentials(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.Parties = c.Engine.(PartyKeeper) })
	put := func(token, body string, want int) apiv1.PartyAdded {
		t.Helper()
		resp, b := e.do(t, "PUT", "/api/v1/parties/bob", token, body)
		if resp.StatusCode != want {
			t.Fatalf("PUT party = %d %s, want %d", resp.StatusCode, b, want)
		}
		var out apiv1.PartyAdded
		_ = json.Unmarshal(b, &out)
		return out
	}
	put(e.viewer, `{"url": "http://bob:8420", "noCheck": true}`, http.StatusForbidden)
	put(e.editorA, `{"url": "http://bob:8420", "noCheck": true}`, http.StatusForbidden)
	put(e.admin, `{"name": "carol", "url": "http://bob:8420", "noCheck": true}`, http.StatusBadRequest)
	added := put(e.admin, `{"url": "http://bob:8420", "project": "fed", "noCheck": true}`, http.StatusCreated)
	issued := added.Credential
	if !strings.HasPrefix(issued, apiv1.CredentialPrefix) || !added.Created || added.Party.Credential != apiv1.CredentialMissing {
		t.Errorf("a new party = %+v, want a kpc_ credential issued and its own missing", added)
	}
	again := put(e.admin, `{"credential": "kpc_from_bob", "noCheck": true}`, http.StatusOK)
	if again.Credential != "" || again.Party.URL != "http://bob:8420" || again.Party.Project != "fed" || again.Party.Credential != apiv1.CredentialSet {
		t.Errorf("an update = %+v, want no new credential, the URL and project kept, its credential set", again)
	}
	// The credential issued is the one bob's calls are checked against.
	req, _ := http.NewRequest("GET", e.url+"/api/v1/federation/party", nil)
	req.Header.Set("Authorization", "Bearer "+issued)
	req.Header.Set(apiv1.PartyHeader, "bob")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound { // accepted; this server has no party identity
		t.Errorf("a call with the issued credential = %d, want 404 KLN-7002 after it is accepted", resp.StatusCode)
	}
	if rotated := put(e.admin, `{"rotate": true, "noCheck": true}`, http.StatusOK); !strings.HasPrefix(rotated.Credential, "kpc_") || rotated.Credential == issued {
		t.Errorf("a rotation issued %q, want a new credential", rotated.Credential)
	}
	if resp, _ := e.do(t, "GET", "/api/v1/parties", e.viewer, ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's list = %d, want 403", resp.StatusCode)
	}
	_, list := e.do(t, "GET", "/api/v1/parties", e.admin, "")
	if !strings.Contains(string(list), `"name":"bob"`) || strings.Contains(string(list), "kpc_") {
		t.Errorf("the list %s: want bob, and no credential", list)
	}
	if resp, _ := e.do(t, "DELETE", "/api/v1/parties/bob", e.admin, ""); resp.StatusCode != http.StatusNoContent {
		t.Errorf("delete = %d, want 204", resp.StatusCode)
	}
	if resp, b := e.do(t, "DELETE", "/api/v1/parties/bob", e.admin, ""); resp.StatusCode != http.StatusNotFound || codeIn(b) != apiv1.CodePartyNotFound {
		t.Errorf("deleting twice = %d %s, want 404 %s", resp.StatusCode, b, apiv1.CodePartyNotFound)
	}
}
