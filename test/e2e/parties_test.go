package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// partyServer is a kiln serve with a party identity, and how to run kiln
// against it.
type partyServer struct {
	name, url, home string
	env             []string // KILN_SERVER and KILN_TOKEN of its admin
}

func startParty(t *testing.T, name string) partyServer {
	t.Helper()
	home := newHome(t)
	base, admin, _ := startServeAs(t, home, nil, nil, "--party", name)
	return partyServer{name: name, url: base, home: home, env: append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)}
}

func (p partyServer) kiln(t *testing.T, args ...string) result {
	t.Helper()
	return kilnWithEnv(t, p.env, p.home, args...)
}

// kilnStdin is kiln with stdin as its standard input.
func (p partyServer) kilnStdin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(kilnBin, append([]string{"--home", p.home}, args...)...)
	cmd.Env, cmd.Stdin = p.env, strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errorsAs(err, &ee) {
		t.Fatal(err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// federationCall calls a federation route of p as a party would, and
// returns the status, the code of the first error (if any) and the party
// the answer names.
func (p partyServer) federationCall(t *testing.T, path, credential, party string) (int, apiv1.Code, string) {
	t.Helper()
	return p.partyCall(t, "GET", path, credential, party, nil)
}

// partyCall calls p's API with method and body (nil: none) as a party
// would (credential and party: none if empty), and returns what
// federationCall does.
func (p partyServer) partyCall(t *testing.T, method, path, credential, party string, body []byte) (int, apiv1.Code, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, p.url+path, bytes.NewReader(body))
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
	var e struct{ Errors []apiv1.Error }
	_ = json.Unmarshal(b, &e)
	var code apiv1.Code
	if len(e.Errors) > 0 {
		code = e.Errors[0].Code
	}
	return resp.StatusCode, code, resp.Header.Get(apiv1.PartyHeader)
}

func mustIssue(t *testing.T, r result, what string) string {
	t.Helper()
	cred := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(cred, apiv1.CredentialPrefix) || strings.Contains(cred, "\n") {
		t.Fatalf("%s: exit %d, stdout %q, stderr %s; want the issued credential alone", what, r.code, r.stdout, r.stderr)
	}
	return cred
}

func TestTwoPartiesRegisterEachOtherAndRefuseOtherCredentials(t *testing.T) {
	t.Parallel()
	alice, bob := startParty(t, "alice"), startParty(t, "bob")

	// Alice registers bob, who has not given her a credential yet.
	first := alice.kiln(t, "party", "add", "bob", "--url", bob.url)
	toBob := mustIssue(t, first, "alice's party add bob")
	if !strings.Contains(first.stderr, "credential is missing") {
		t.Errorf("alice's party add bob without --credential says %q, want a warning that the credential is missing", first.stderr)
	}
	// Bob registers alice with it; his server checks it with alice's.
	toAlice := mustIssue(t, bob.kiln(t, "party", "add", "alice", "--url", alice.url, "--credential", toBob), "bob's party add alice")
	// Alice completes bob's registration, the credential on standard
	// input: an update issues no new credential.
	if r := alice.kilnStdin(t, toAlice+"\n", "party", "add", "bob", "--credential", "-"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no new credential") {
		t.Errorf("alice's update of bob = exit %d, stdout %q, stderr %s; want no credential printed", r.code, r.stdout, r.stderr)
	}
	if r := bob.kiln(t, "party", "add", "alice", "--credential", "kpc_wrong"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePartyCredential)) || !strings.Contains(r.stderr, "party/alice") {
		t.Errorf("a wrong credential for alice = exit %d, %s; want %s naming party/alice", r.code, r.stderr, apiv1.CodePartyCredential)
	}

	checkPartyLists(t, alice, bob, toBob, toAlice)
	checkFederationRefusals(t, alice, toBob)

	// Alice forgets bob: his credential is refused, and his server says so.
	if r := alice.kiln(t, "party", "remove", "bob"); r.code != 0 {
		t.Fatalf("party remove bob: %s", r.stderr)
	}
	if code, c, _ := alice.federationCall(t, "/api/v1/federation/party", toBob, "bob"); code != http.StatusUnauthorized || c != apiv1.CodePartyCredential {
		t.Errorf("a removed party's call = %d %s, want 401 %s", code, c, apiv1.CodePartyCredential)
	}
	if r := bob.kiln(t, "party", "add", "alice"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePartyCredential)) || !strings.Contains(r.stderr, "removed or rotated party bob") {
		t.Errorf("bob's check of alice after she removed him = exit %d, %s; want %s", r.code, r.stderr, apiv1.CodePartyCredential)
	}
	if r := alice.kiln(t, "party", "remove", "bob"); r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodePartyNotFound)) {
		t.Errorf("removing bob twice = exit %d, %s; want %s", r.code, r.stderr, apiv1.CodePartyNotFound)
	}
}

// checkPartyLists lists the parties on both sides, through each server
// and on alice's home, and finds no credential in any list.
func checkPartyLists(t *testing.T, alice, bob partyServer, creds ...string) {
	t.Helper()
	lists := map[string]result{
		"alice's server": alice.kiln(t, "party", "list"),
		"bob's server":   bob.kiln(t, "party", "list"),
		"alice's json":   alice.kiln(t, "party", "list", "-o", "json"),
		"alice's home":   kiln(t, alice.home, "party", "list"),
	}
	for where, r := range lists {
		if r.code != 0 {
			t.Errorf("party list on %s: %s", where, r.stderr)
		}
		for _, c := range creds {
			if strings.Contains(r.stdout, c) {
				t.Errorf("party list on %s prints a credential:\n%s", where, r.stdout)
			}
		}
	}
	for where, want := range map[string]string{"alice's server": "bob", "bob's server": "alice", "alice's home": "bob"} {
		lines := strings.Split(strings.TrimSpace(lists[where].stdout), "\n")
		if len(lines) != 2 || strings.Fields(lines[1])[0] != want || !strings.Contains(lines[1], " set ") {
			t.Errorf("party list on %s:\n%s\nwant %s alone, its credential set", where, lists[where].stdout, want)
		}
	}
}

// checkFederationRefusals calls alice's federation routes with no, an
// unknown and bob's credential under the wrong name: all 401 KLN-7001.
func checkFederationRefusals(t *testing.T, alice partyServer, toBob string) {
	t.Helper()
	for _, tc := range []struct{ what, credential, party string }{
		{"no credential", "", "bob"},
		{"an unknown credential", "kpc_unknown", "bob"},
		{"bob's credential as carol", toBob, "carol"},
		{"bob's credential without Kiln-Party", toBob, ""},
	} {
		code, c, answerer := alice.federationCall(t, "/api/v1/federation/parts/r1", tc.credential, tc.party)
		if code != http.StatusUnauthorized || c != apiv1.CodePartyCredential || answerer != "alice" {
			t.Errorf("%s = %d %s from %q, want 401 %s from alice", tc.what, code, c, answerer, apiv1.CodePartyCredential)
		}
	}
	// Bob's own credential passes: alice knows no such part (KLN-4001)
	// or, until her engine hosts parts, hosts none (KLN-7002).
	code, c, _ := alice.federationCall(t, "/api/v1/federation/parts/r1", toBob, "bob")
	if code != http.StatusNotFound || (c != apiv1.CodeRunNotFound && c != apiv1.CodeNoPartyIdentity) {
		t.Errorf("bob's call = %d %s, want 404 past authentication", code, c)
	}
}

func TestServePartyIdentityIsChecked(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--advertise", "http://10.0.0.2:8420"}, []string{string(apiv1.CodeUsage), "--advertise", "--party"}},
		{[]string{"--party", "Alice_1"}, []string{string(apiv1.CodeInvalidName), "--party", "Alice_1"}},
		{[]string{"--party", "alice", "--advertise", "10.0.0.2:8420"}, []string{string(apiv1.CodePartyURL), "--advertise"}},
	} {
		r := kiln(t, home, append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		for _, w := range tc.want {
			if r.code == 0 || !strings.Contains(r.stderr, w) {
				t.Errorf("kiln serve %v = exit %d, %s; want %q in the error", tc.args, r.code, r.stderr, w)
			}
		}
	}
	writeFile(t, home, "config.yaml", "party:\n  name: \"Bad_\"\n")
	r := kiln(t, home, "serve", "--addr", "127.0.0.1:0")
	if r.code == 0 || !strings.Contains(r.stderr, "config.yaml") || !strings.Contains(r.stderr, "party.name") {
		t.Errorf("a bad party.name in config.yaml = exit %d, %s; want the file and key named", r.code, r.stderr)
	}
}
