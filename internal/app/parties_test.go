package app

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func openParty(t *testing.T, party string) *App {
	t.Helper()
	a, err := Open(t.Context(), Config{Home: t.TempDir(), Party: party})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestPartiesAreRegisteredUpdatedAndCalledWithTheirCredential(t *testing.T) {
	t.Parallel()
	a := openParty(t, "alice")
	ctx := t.Context()
	added, err := a.AddParty(ctx, apiv1.PartyRequest{Name: "bob", URL: "http://bob:8420", NoCheck: true})
	if err != nil || !added.Created || !strings.HasPrefix(added.Credential, apiv1.CredentialPrefix) || added.Party.Project != "default" {
		t.Fatalf("AddParty(bob) = %+v, %v; want bob created in project default with a kpc_ credential", added, err)
	}
	if _, err := a.PartyClient(ctx, "bob"); apiv1.CodeOf(err) != apiv1.CodePartyNoCredential {
		t.Errorf("PartyClient(bob) without his credential = %v, want %s", err, apiv1.CodePartyNoCredential)
	}
	again, err := a.AddParty(ctx, apiv1.PartyRequest{Name: "bob", Credential: "kpc_from_bob", NoCheck: true})
	if err != nil || again.Created || again.Credential != "" || again.Party.URL != "http://bob:8420" || again.Party.Credential != apiv1.CredentialSet {
		t.Errorf("an update of bob = %+v, %v; want his URL kept, no new credential, his own set", again, err)
	}
	if c, err := a.PartyClient(ctx, "bob"); err != nil || c == nil {
		t.Errorf("PartyClient(bob) = %v, %v", c, err)
	}
	if _, err := a.PartyClient(ctx, "zed"); apiv1.CodeOf(err) != apiv1.CodePartyNotFound {
		t.Errorf("PartyClient(zed) = %v, want %s", err, apiv1.CodePartyNotFound)
	}
	if _, err := openParty(t, "").PartyClient(ctx, "bob"); apiv1.CodeOf(err) != apiv1.CodeNoPartyIdentity {
		t.Errorf("PartyClient of a kiln without identity = %v, want %s", err, apiv1.CodeNoPartyIdentity)
	}
	if err := a.RemoveParty(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := a.RemoveParty(ctx, "bob"); apiv1.CodeOf(err) != apiv1.CodePartyNotFound {
		t.Errorf("removing bob twice = %v, want %s", err, apiv1.CodePartyNotFound)
	}
}

func TestAPartyRequestIsRefusedWithTheFieldAtFault(t *testing.T) {
	t.Parallel()
	a := openParty(t, "alice")
	// A server that says it is carol.
	carol := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(apiv1.PartyHeader, "carol")
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer carol.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		req   apiv1.PartyRequest
		code  apiv1.Code
		field string
	}{
		{apiv1.PartyRequest{Name: "Bob", URL: "http://bob"}, apiv1.CodeInvalidName, "name"},
		{apiv1.PartyRequest{Name: "alice", URL: "http://bob"}, apiv1.CodePartySelf, ""},
		{apiv1.PartyRequest{Name: "bob", URL: "bob:8420"}, apiv1.CodePartyURL, "url"},
		{apiv1.PartyRequest{Name: "bob"}, apiv1.CodePartyURL, "url"},
		{apiv1.PartyRequest{Name: "bob", URL: "http://bob", Credential: "kln_an_api_token"}, apiv1.CodePartyCredential, "credential"},
		{apiv1.PartyRequest{Name: "bob", URL: closed}, apiv1.CodePartyUnreachable, "url"},
		{apiv1.PartyRequest{Name: "bob", URL: carol.URL}, apiv1.CodePartyMismatch, "url"},
	} {
		_, err := a.AddParty(t.Context(), tc.req)
		var e *apiv1.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Field != tc.field || e.Object != "party/"+tc.req.Name {
			t.Errorf("AddParty(%+v) = %v; want %s on party/%s field %q", tc.req, err, tc.code, tc.req.Name, tc.field)
		}
	}
	if ps, err := a.Parties(t.Context()); err != nil || len(ps) != 0 {
		t.Errorf("parties after refusals = %+v, %v; want none stored", ps, err)
	}
}
