package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// fakeHost records what the federation routes ask of it. (Pure HTTP
// logic: the real PartyHost is the engine, tested end to end.)
type fakeHost struct {
	mu    sync.Mutex
	calls []string
}

func (h *fakeHost) record(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, fmt.Sprintf(format, args...))
}

func (h *fakeHost) CreatePart(_ context.Context, from string, req apiv1.PartRequest) (apiv1.PartStatus, error) {
	h.record("create %s by %s from %s", req.Run, req.Initiator, from)
	return apiv1.PartStatus{Run: req.Run, Part: apiv1.PartID(req.Run, "alice"), Party: "alice", Phase: apiv1.PhasePending}, nil
}

func (h *fakeHost) PartStatus(_ context.Context, from string, run apiv1.RunID) (apiv1.PartStatus, error) {
	h.record("status %s from %s", run, from)
	if run != "r1" {
		return apiv1.PartStatus{}, apiv1.Errorf(apiv1.CodeRunNotFound, "no such run")
	}
	return apiv1.PartStatus{Run: run, Party: "alice", Phase: apiv1.PhaseRunning}, nil
}

func (h *fakeHost) OrderShare(_ context.Context, from string, run apiv1.RunID, task string, o apiv1.ShareOrder) (apiv1.ShareStatus, error) {
	h.record("order %s/%s %s %d from %s", run, task, o.Action, o.Attempt, from)
	return apiv1.ShareStatus{Task: task, Attempt: o.Attempt, State: apiv1.ShareReserved}, nil
}

func (h *fakeHost) CheckPart(context.Context, string, apiv1.PartRequest) error { return nil }

func (h *fakeHost) PartOutput(context.Context, string, apiv1.RunID, string, string) (string, error) {
	return "", nil
}

func (h *fakeHost) PartArtifact(context.Context, string, apiv1.RunID, string, string) ([]byte, error) {
	return nil, nil
}

func (h *fakeHost) StopPart(_ context.Context, from string, run apiv1.RunID, how string) error {
	h.record("%s %s from %s", how, run, from)
	return nil
}

// partyEnv is a server of party alice over a real store where party bob
// is registered with credential kpc_bob, and an admin API token.
type partyEnv struct {
	url, admin string
	store      *sqlite.Store
	host       *fakeHost
}

func newPartyEnv(t *testing.T, configure func(*Config)) *partyEnv {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	bob := store.Party{Name: "bob", URL: "http://bob", Project: "fed", CredentialHash: store.HashCredential("kpc_bob"), UpdatedAt: time.Now()}
	if err := st.PutParty(t.Context(), bob); err != nil {
		t.Fatal(err)
	}
	admin, _, err := CreateToken(t.Context(), st, "admin", "admin", []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	e := &partyEnv{admin: admin, store: st, host: &fakeHost{}}
	cfg := Config{Store: st, Party: "alice", PartyHost: e.host}
	if configure != nil {
		configure(&cfg)
	}
	srv := httptest.NewServer(New(cfg).Handler())
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// call sends a request with the credential and party header given ("":
// none) and returns the status, the answer's Kiln-Party and its body.
func (e *partyEnv) call(t *testing.T, method, path, credential, party, body string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if credential != "" {
		req.Header.Set("Authorization", "Bearer "+credential)
	}
	if party != "" {
		req.Header.Set(apiv1.PartyHeader, party)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(apiv1.PartyHeader), b
}

func codeIn(b []byte) apiv1.Code {
	var e struct{ Errors []apiv1.Error }
	if json.Unmarshal(b, &e) != nil || len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code
}

func TestFederationRoutesRefuseAllButTheCredentialsParty(t *testing.T) {
	t.Parallel()
	e := newPartyEnv(t, nil)
	for _, tc := range []struct{ name, credential, party string }{
		{"no credential", "", "bob"},
		{"an unknown credential", "kpc_guess", "bob"},
		{"no Kiln-Party header", "kpc_bob", ""},
		{"another party's name", "kpc_bob", "carol"},
		{"an API token", e.admin, "bob"},
	} {
		for _, path := range []string{"/api/v1/federation/party", "/api/v1/federation/parts/r1"} {
			code, answerer, b := e.call(t, "GET", path, tc.credential, tc.party, "")
			if code != http.StatusUnauthorized || codeIn(b) != apiv1.CodePartyCredential {
				t.Errorf("%s, GET %s = %d %s; want 401 %s", tc.name, path, code, b, apiv1.CodePartyCredential)
			}
			if answerer != "alice" {
				t.Errorf("%s: the refusal names party %q, want alice", tc.name, answerer)
			}
		}
	}
	if code, _, b := e.call(t, "GET", "/api/v1/runs", "kpc_bob", "bob", ""); code != http.StatusUnauthorized || codeIn(b) != apiv1.CodeUnauthenticated {
		t.Errorf("a party credential on the API = %d %s, want 401 %s", code, b, apiv1.CodeUnauthenticated)
	}
	if err := e.store.DeleteParty(t.Context(), "bob"); err != nil {
		t.Fatal(err)
	}
	if code, _, b := e.call(t, "GET", "/api/v1/federation/party", "kpc_bob", "bob", ""); code != http.StatusUnauthorized || codeIn(b) != apiv1.CodePartyCredential {
		t.Errorf("a removed party's credential = %d %s, want 401 %s", code, b, apiv1.CodePartyCredential)
	}
	if len(e.host.calls) != 0 {
		t.Errorf("refused calls reached the host: %q", e.host.calls)
	}
}

func TestFederationRoutesCallTheHostAsTheCallingParty(t *testing.T) {
	t.Parallel()
	e := newPartyEnv(t, nil)
	call := func(method, path, body string, want int) []byte {
		t.Helper()
		code, _, b := e.call(t, method, path, "kpc_bob", "bob", body)
		if code != want {
			t.Errorf("%s %s = %d %s, want %d", method, path, code, b, want)
		}
		return b
	}
	var hello apiv1.PartyHello
	if err := json.Unmarshal(call("GET", "/api/v1/federation/party", "", 200), &hello); err != nil || hello.Party != "alice" {
		t.Errorf("hello = %+v, %v; want alice", hello, err)
	}
	var ps apiv1.PartStatus
	b := call("PUT", "/api/v1/federation/parts/r1", `{"workflow": {"metadata": {"name": "wf"}}, "newerField": 1}`, 200)
	if err := json.Unmarshal(b, &ps); err != nil || ps.Part != "r1-alice" {
		t.Errorf("create = %s, %v", b, err)
	}
	call("PUT", "/api/v1/federation/parts/r1", `{"run": "r2", "workflow": {}}`, 400)
	call("PUT", "/api/v1/federation/parts/r1", `{"initiator": "carol", "workflow": {}}`, 400)
	call("PUT", "/api/v1/federation/parts/r1", `{}`, 400)
	call("GET", "/api/v1/federation/parts/r1", "", 200)
	if b := call("GET", "/api/v1/federation/parts/r9", "", 404); codeIn(b) != apiv1.CodeRunNotFound {
		t.Errorf("an unknown part = %s, want %s", b, apiv1.CodeRunNotFound)
	}
	call("PUT", "/api/v1/federation/parts/r1/shares/train", `{"attempt": 2, "action": "reserve"}`, 200)
	call("PUT", "/api/v1/federation/parts/r1/shares/train", `{"attempt": 2, "action": "launch"}`, 400)
	call("PUT", "/api/v1/federation/parts/r1/shares/train", `{"attempt": 0, "action": "start"}`, 400)
	for _, how := range []string{"cancel", "suspend", "resume"} {
		call("POST", "/api/v1/federation/parts/r1/"+how, "", 204)
	}
	want := []string{
		"create r1 by bob from bob", "status r1 from bob", "status r9 from bob", "order r1/train reserve 2 from bob",
		"cancel r1 from bob", "suspend r1 from bob", "resume r1 from bob",
	}
	if strings.Join(e.host.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("the host was asked\n%s\nwant\n%s", strings.Join(e.host.calls, "\n"), strings.Join(want, "\n"))
	}
}

func TestAServerWithoutPartyIdentityAnswers7002ToAuthenticatedParties(t *testing.T) {
	t.Parallel()
	for name, configure := range map[string]func(*Config){
		"no host":  func(c *Config) { c.PartyHost = nil },
		"no party": func(c *Config) { c.Party = "" },
	} {
		e := newPartyEnv(t, configure)
		if code, _, b := e.call(t, "GET", "/api/v1/federation/parts/r1", "kpc_bob", "bob", ""); code != http.StatusNotFound || codeIn(b) != apiv1.CodeNoPartyIdentity {
			t.Errorf("%s: GET part = %d %s, want 404 %s", name, code, b, apiv1.CodeNoPartyIdentity)
		}
		if code, _, b := e.call(t, "GET", "/api/v1/federation/parts/r1", "kpc_guess", "bob", ""); code != http.StatusUnauthorized {
			t.Errorf("%s: an unknown credential = %d %s, want 401 before anything else", name, code, b)
		}
	}
	e := newPartyEnv(t, func(c *Config) { c.Party = "" })
	if code, answerer, b := e.call(t, "GET", "/api/v1/federation/party", "kpc_bob", "bob", ""); code != http.StatusNotFound || answerer != "" || codeIn(b) != apiv1.CodeNoPartyIdentity {
		t.Errorf("hello without identity = %d %q %s, want 404 %s naming no party", code, answerer, b, apiv1.CodeNoPartyIdentity)
	}
}
