package client_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/server"
	"kiln.dev/kiln/internal/store"
)

// newServer serves a real embedded kiln, not started (no run is worked:
// what is sent stays in the store to be read), and returns a client of
// it with an editor's token named ci, and the token as stored.
func newServer(t *testing.T) (*client.Client, *app.App, *store.Token) {
	t.Helper()
	a, err := app.Open(t.Context(), app.Config{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	srv := httptest.NewServer(server.New(server.Config{Store: a.Store, Engine: a, Secrets: a, Cache: a}).Handler())
	t.Cleanup(srv.Close)
	raw, tok, err := server.CreateToken(t.Context(), a.Store, "ci", "editor", []string{"*"})
	if err != nil {
		t.Fatal(err)
	}
	return client.New(srv.URL, raw), a, tok
}

// gated saves run gated-1, owned elsewhere, whose task ship waits for an
// approval and task count for a float.
func gated(t *testing.T, st store.Store) {
	t.Helper()
	since := time.Now().UTC()
	err := st.CreateRun(t.Context(), store.CreateRunParams{
		Run:   apiv1.Run{ID: "gated-1", Name: "gated", Kind: apiv1.KindWorkflow, CreatedAt: since, Workflow: &apiv1.Workflow{}},
		Nodes: []string{"ship", "count"}, Owner: "elsewhere", LeaseUntil: since.Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Apply(t.Context(), &store.Change{Run: "gated-1", Owner: "elsewhere", Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning}, Nodes: []apiv1.NodeStatus{
		{Name: "ship", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "approve", WaitingSince: &since}},
		{Name: "count", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "signal", Type: "float", WaitingSince: &since}},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSendGateInput(t *testing.T) {
	t.Parallel()
	c, a, tok := newServer(t)
	gated(t, a.Store)
	no, value := false, "0.25"
	// By and At are the server's to set: what the client says is not sent.
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := c.SendGateInput(t.Context(), "gated-1", "ship", apiv1.GateInput{Approve: &no, Reason: "why not", By: "mallory", At: at}); err != nil {
		t.Fatal(err)
	}
	if err := c.SendGateInput(t.Context(), "gated-1", "count", apiv1.GateInput{Value: &value}); err != nil {
		t.Fatal(err)
	}
	got, err := a.Store.GateInputs(t.Context(), "gated-1")
	if err != nil || len(got) != 2 {
		t.Fatalf("GateInputs = %+v, %v; want the two sent", got, err)
	}
	by := "ci (token " + tok.ID + ", editor)"
	if r := got[0]; r.Node != "ship" || r.Approve == nil || *r.Approve || r.Reason != "why not" || r.By != by || r.At.Year() < 2026 {
		t.Errorf("the rejection was stored as %+v; want it from %s, now", r, by)
	}
	if r := got[1]; r.Node != "count" || r.Value == nil || *r.Value != "0.25" || r.By != by {
		t.Errorf("the signal was stored as %+v", r)
	}

	bad := "a quarter"
	err = c.SendGateInput(t.Context(), "gated-1", "count", apiv1.GateInput{Value: &bad})
	if apiv1.CodeOf(err) != apiv1.CodeNotWaiting || !strings.Contains(err.Error(), `"a quarter" is not a float`) {
		t.Errorf("a value that is not a float = %v, want KLN-4014 quoting it", err)
	}
	err = c.SendGateInput(t.Context(), "gated-1", "ship", apiv1.GateInput{Approve: &no, Value: &value})
	if apiv1.CodeOf(err) != apiv1.CodeBadRequest {
		t.Errorf("an approval with a value = %v, want KLN-4006 before anything is sent", err)
	}
	if got, _ := a.Store.GateInputs(t.Context(), "gated-1"); len(got) != 2 {
		t.Errorf("GateInputs after refusals = %+v, want still the two", got)
	}
}
