package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// No route of the federation API lets a party see or change a part of a
// run it did not initiate, nor hand messages to a part of a run it takes
// no part in; no channel route takes anything but a share's own token.
// carol takes part in alice's run but does not initiate it; dave is
// registered at bob but takes no part in it.
func TestNoFederationRouteLetsAPartyTouchAnotherInitiatorsPart(t *testing.T) {
	t.Parallel()
	alice, bob, carol := threeParties(t)
	dave := startFed(t, "dave", "127.0.0.4")
	federate(t, bob, dave)
	run := alice.submit(t, sleepers("60s", ""), map[string]string{"ledger": ledger(t), "seconds": "600"})
	waitRunning(t, alice, run.ID)
	part := apiv1.PartID(run.ID, "bob")
	before := bob.run(t, part)

	wf := *run.Workflow
	body := func(initiator string) []byte {
		b, _ := json.Marshal(apiv1.PartRequest{Run: run.ID, Initiator: initiator, Workflow: &wf})
		return b
	}
	order, _ := json.Marshal(apiv1.ShareOrder{Attempt: 1, Action: apiv1.OrderAbort, Reason: "not yours"})
	base := "/api/v1/federation/parts/" + string(run.ID)
	routes := []struct {
		method, path string
		body         func(party string) []byte
	}{
		{"GET", base, nil},
		{"PUT", base, body},
		{"PUT", base + "/shares/work", func(string) []byte { return order }},
		{"POST", base + "/cancel", nil},
		{"POST", base + "/end", nil},
		{"POST", base + "/fail", nil},
		{"POST", base + "/suspend", nil},
		{"POST", base + "/resume", nil},
	}
	for _, caller := range []*fedServer{carol, dave} {
		cred := carolCredentialAtBob(t, bob, caller)
		for _, r := range routes {
			var b []byte
			if r.body != nil {
				b = r.body(caller.name)
			}
			status, code, _ := bob.partyCall(t, r.method, r.path, cred, caller.name, b)
			if status != http.StatusNotFound || code != apiv1.CodeRunNotFound {
				t.Errorf("%s %s by %s = %d %s; want 404 %s, as for a run that does not exist", r.method, r.path, caller.name, status, code, apiv1.CodeRunNotFound)
			}
		}
		// A part request naming another initiator is refused outright.
		if status, _, _ := bob.partyCall(t, "PUT", base, cred, caller.name, body("alice")); status != http.StatusBadRequest {
			t.Errorf("%s asking for a part in alice's name = %d; want 400", caller.name, status)
		}
	}
	// dave takes no part in the run: the channel takes nothing from him.
	cred := carolCredentialAtBob(t, bob, dave)
	piece := base + "/channel/work/1/guest/host/hello?piece=0&pieces=1&size=2&digest=sha256:" + sha256hex("hi")
	if status, code, _ := bob.partyCall(t, "PUT", piece, cred, "dave", []byte("hi")); status != http.StatusNotFound || code != apiv1.CodeRunNotFound {
		t.Errorf("a piece from dave, who fills no role = %d %s; want 404 %s", status, code, apiv1.CodeRunNotFound)
	}
	// carol fills arbiter, not guest: she cannot send as alice's role.
	cred = carolCredentialAtBob(t, bob, carol)
	if status, code, _ := bob.partyCall(t, "PUT", piece, cred, "carol", []byte("hi")); status != http.StatusNotFound || code != apiv1.CodeRunNotFound {
		t.Errorf("a piece from carol as guest = %d %s; want 404 %s", status, code, apiv1.CodeRunNotFound)
	}
	// The share routes take a share's own channel token and nothing else:
	// not a party credential, not the server's admin token, not a made-up one.
	share := "/api/v1/channel/" + string(part) + "/work/1"
	for _, tok := range []string{"", cred, tokenOf(bob), apiv1.ChannelTokenPrefix + sha256hex("guess")} {
		for _, m := range []string{"GET /in/alice/guest/hello", "PUT /out/alice/guest/hello?piece=0&pieces=1&size=2&digest=sha256:" + sha256hex("hi"), "DELETE /in/alice/guest/hello"} {
			method, path, _ := strings.Cut(m, " ")
			if status, code, _ := bob.partyCall(t, method, share+path, tok, "", []byte("hi")); status != http.StatusUnauthorized || code != apiv1.CodeChannelToken {
				t.Errorf("%s with token %.8q = %d %s; want 401 %s", m, tok, status, code, apiv1.CodeChannelToken)
			}
		}
	}
	after := bob.run(t, part)
	if after.Status.Phase != apiv1.PhaseRunning || before.Status.Phase != apiv1.PhaseRunning {
		t.Errorf("bob's part went from %s to %s; want it Running throughout", before.Status.Phase, after.Status.Phase)
	}
	if n := nodeOf(t, after, "work"); len(n.Attempts) != 1 || n.Attempts[0].Phase != apiv1.PhaseRunning {
		t.Errorf("bob's share: %+v; want its one attempt still running", n.Attempts)
	}
	if log, _ := bob.api.Messages(t.Context(), part); len(log) != 0 {
		t.Errorf("bob's part logged messages no share sent: %+v", log)
	}
	if err := alice.api.Cancel(t.Context(), run.ID); err != nil {
		t.Fatal(err)
	}
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
