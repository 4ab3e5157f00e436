package federation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// party is a party server that answers what the test sets, after checking
// that each request names its sender and presents its credential.
func party(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer kpc_secret" || r.Header.Get(apiv1.PartyHeader) != "alice" {
			t.Errorf("%s %s: Authorization %q, Kiln-Party %q; want the credential and alice",
				r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get(apiv1.PartyHeader))
		}
		w.Header().Set(apiv1.PartyHeader, "bob")
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL+"/", "alice", "kpc_secret", "")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func TestClientSendsEachCallToItsRoute(t *testing.T) {
	t.Parallel()
	var seen []string
	c := party(t, func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.EscapedPath())
		switch r.Method + " " + r.URL.Path {
		case "PUT /api/v1/federation/parts/r1":
			var req apiv1.PartRequest
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Initiator != "alice" {
				t.Errorf("part request %+v, %v", req, err)
			}
			writeJSON(w, 200, apiv1.PartStatus{Run: req.Run, Part: apiv1.PartID(req.Run, "bob"), Party: "bob", Phase: apiv1.PhasePending})
		case "GET /api/v1/federation/parts/r1":
			writeJSON(w, 200, apiv1.PartStatus{Run: "r1", Party: "bob", Phase: apiv1.PhaseRunning})
		case "PUT /api/v1/federation/parts/r1/shares/train x":
			var o apiv1.ShareOrder
			_ = json.NewDecoder(r.Body).Decode(&o)
			writeJSON(w, 200, apiv1.ShareStatus{Task: "train x", Attempt: o.Attempt, State: apiv1.ShareReserved, Address: "10.0.0.2:4000"})
		case "POST /api/v1/federation/parts/r1/suspend":
			w.WriteHeader(http.StatusNoContent)
		case "GET /api/v1/federation/party":
			writeJSON(w, 200, apiv1.PartyHello{Party: "bob"})
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
	})
	ctx := t.Context()
	ps, err := c.CreatePart(ctx, apiv1.PartRequest{Run: "r1", Initiator: "alice", Workflow: &apiv1.Workflow{}})
	if err != nil || ps.Part != "r1-bob" || ps.Phase != apiv1.PhasePending {
		t.Errorf("CreatePart = %+v, %v", ps, err)
	}
	if ps, err := c.PartStatus(ctx, "r1"); err != nil || ps.Phase != apiv1.PhaseRunning {
		t.Errorf("PartStatus = %+v, %v", ps, err)
	}
	ss, err := c.OrderShare(ctx, "r1", "train x", apiv1.ShareOrder{Attempt: 2, Action: apiv1.OrderReserve})
	if err != nil || ss.Attempt != 2 || ss.State != apiv1.ShareReserved || ss.Address != "10.0.0.2:4000" {
		t.Errorf("OrderShare = %+v, %v", ss, err)
	}
	if err := c.StopPart(ctx, "r1", "suspend"); err != nil {
		t.Errorf("StopPart = %v", err)
	}
	if name, err := c.Hello(ctx); err != nil || name != "bob" {
		t.Errorf("Hello = %q, %v; want bob", name, err)
	}
	if len(seen) != 5 || seen[2] != "PUT /api/v1/federation/parts/r1/shares/train%20x" {
		t.Errorf("requests %q: want five, the task's name escaped", seen)
	}
	if err := c.StopPart(ctx, "r1", "pause"); apiv1.CodeOf(err) != apiv1.CodeBadRequest {
		t.Errorf("StopPart(pause) = %v, want %s without a request", err, apiv1.CodeBadRequest)
	}
}

func TestClientReturnsThePartysCodedErrors(t *testing.T) {
	t.Parallel()
	c := party(t, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"errors": []apiv1.Error{{Code: apiv1.CodePartyCredential, Message: "refused"}}})
	})
	_, err := c.PartStatus(t.Context(), "r1")
	var coded *apiv1.Error
	if !errors.As(err, &coded) || coded.Code != apiv1.CodePartyCredential || coded.Message != "refused" {
		t.Errorf("PartStatus = %v, want the party's KLN-7001", err)
	}
	// Hello says who refused.
	if name, err := c.Hello(t.Context()); name != "bob" || apiv1.CodeOf(err) != apiv1.CodePartyCredential {
		t.Errorf("Hello = %q, %v; want bob and KLN-7001", name, err)
	}

	plain := party(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad gateway", http.StatusBadGateway) })
	if _, err := plain.PartStatus(t.Context(), "r1"); err == nil || apiv1.CodeOf(err) != "" {
		t.Errorf("an answer without coded errors = %v, want an uncoded error with its status", err)
	}
}

func TestClientReturnsNetworkErrorsAsTheyAre(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	c := New("http://"+addr, "alice", "kpc_secret", "")
	_, err = c.PartStatus(t.Context(), "r1")
	var ue *url.Error
	if !errors.As(err, &ue) || apiv1.CodeOf(err) != "" {
		t.Errorf("PartStatus of a closed port = %v, want the *url.Error as it is, for the caller to retry", err)
	}
}

// A pinned client takes the party's certificate whoever signed it, and
// no other.
func TestAPinnedClientTakesThatCertificateAlone(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(apiv1.PartyHeader, "bob")
		_, _ = w.Write([]byte(`{"party":"bob"}`))
	}))
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := "sha256:" + hex.EncodeToString(sum[:])
	if name, err := New(srv.URL, "alice", "kpc_x", pin).Hello(t.Context()); err != nil || name != "bob" {
		t.Errorf("Hello with the right pin = %q, %v; want bob", name, err)
	}
	if _, err := New(srv.URL, "alice", "kpc_x", "sha256:"+strings.Repeat("0", 64)).Hello(t.Context()); err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Errorf("Hello with another pin = %v; want a refusal naming the pin", err)
	}
	if _, err := New(srv.URL, "alice", "kpc_x", "").Hello(t.Context()); err == nil {
		t.Errorf("Hello without a pin took a certificate no root signed")
	}
}
