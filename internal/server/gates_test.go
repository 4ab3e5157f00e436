package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// gatedRun saves a running run of project, owned by an engine elsewhere,
// whose task ship waits for an approval and task count for an int; task
// greet is a command.
func (e *env) gatedRun(t *testing.T, id apiv1.RunID, project string, phase apiv1.Phase) {
	t.Helper()
	st := e.srv.cfg.Store
	since := time.Now().UTC()
	err := st.CreateRun(t.Context(), store.CreateRunParams{
		Run:   apiv1.Run{ID: id, Name: "gated", Kind: apiv1.KindWorkflow, Project: project, CreatedAt: since, Workflow: &apiv1.Workflow{}},
		Nodes: []string{"ship", "count", "greet"}, Owner: "elsewhere", LeaseUntil: since.Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Apply(t.Context(), &store.Change{Run: id, Owner: "elsewhere", Status: &apiv1.RunStatus{Phase: phase}, Nodes: []apiv1.NodeStatus{
		{Name: "ship", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "approve", WaitingSince: &since}},
		{Name: "count", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindGate, Gate: &apiv1.GateStatus{Kind: "signal", Type: "int", WaitingSince: &since}},
		{Name: "greet", Phase: apiv1.PhaseRunning, Kind: apiv1.NodeKindCommand},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGateInputsAreSentAsTheToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gatedRun(t, "gated-1", "a", apiv1.PhaseRunning)
	tokens, err := e.srv.cfg.Store.ListTokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var editor string
	for _, tok := range tokens {
		if tok.Role == "editor" {
			editor = "editor (token " + tok.ID + ", editor)"
		}
	}

	for _, c := range []struct{ path, body, sent string }{
		{"/api/v1/runs/gated-1/nodes/ship/approve", `{"approve": false, "reason": "not on a Friday"}`, "reject"},
		{"/api/v1/runs/gated-1/nodes/count/signal", `{"value": "-12", "reason": "fewer"}`, "signal"},
	} {
		resp, b := e.do(t, "POST", c.path, e.editorA, c.body)
		var out map[string]string
		if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusAccepted || out["sent"] != c.sent || out["by"] != editor {
			t.Errorf("POST %s %s = %d %s; want 202 saying %s by %s", c.path, c.body, resp.StatusCode, b, c.sent, editor)
		}
	}
	// A second decision before the engine applied the first: 409.
	if resp, b := e.do(t, "POST", "/api/v1/runs/gated-1/nodes/ship/approve", e.editorA, `{"approve": true}`); resp.StatusCode != http.StatusConflict ||
		!strings.Contains(string(b), "already rejected") {
		t.Errorf("a second decision = %d %s; want 409 naming the first", resp.StatusCode, b)
	}
	got, err := e.srv.cfg.Store.GateInputs(t.Context(), "gated-1")
	if err != nil || len(got) != 2 {
		t.Fatalf("GateInputs = %+v, %v; want the two accepted", got, err)
	}
	no, value := got[0], got[1]
	if no.Node != "ship" || no.Approve == nil || *no.Approve || no.Reason != "not on a Friday" || no.By != editor || no.At.IsZero() {
		t.Errorf("the rejection was stored as %+v", no)
	}
	if value.Node != "count" || value.Value == nil || *value.Value != "-12" || value.Approve != nil || value.Reason != "fewer" || value.By != editor {
		t.Errorf("the signal was stored as %+v", value)
	}
}

func TestGateInputRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.gatedRun(t, "gated-1", "a", apiv1.PhaseRunning)
	e.gatedRun(t, "gated-done", "a", apiv1.PhaseSucceeded)
	const run = "/api/v1/runs/gated-1/nodes/"

	cases := map[string]struct {
		path, token, body string
		status            int
		code              apiv1.Code
	}{
		"a sender named in the body":    {run + "ship/approve", e.editorA, `{"approve": true, "by": "mallory"}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"a body that is not JSON":       {run + "ship/approve", e.editorA, `approve`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"two JSON values":               {run + "ship/approve", e.editorA, `{"approve": true} {}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"an approval without approve":   {run + "ship/approve", e.editorA, `{"reason": "hm"}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"approve as a string":           {run + "ship/approve", e.editorA, `{"approve": "yes"}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"a signal without a value":      {run + "count/signal", e.editorA, `{}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"a value that is not a string":  {run + "count/signal", e.editorA, `{"value": 12}`, http.StatusBadRequest, apiv1.CodeBadRequest},
		"a viewer":                      {run + "ship/approve", e.viewer, `{"approve": true}`, http.StatusForbidden, apiv1.CodeForbidden},
		"an approval to a signal gate":  {run + "count/approve", e.editorA, `{"approve": true}`, http.StatusConflict, apiv1.CodeNotWaiting},
		"a value to an approval gate":   {run + "ship/signal", e.editorA, `{"value": "yes"}`, http.StatusConflict, apiv1.CodeNotWaiting},
		"a value that is not an int":    {run + "count/signal", e.editorA, `{"value": "12.5"}`, http.StatusConflict, apiv1.CodeNotWaiting},
		"a command task":                {run + "greet/approve", e.editorA, `{"approve": true}`, http.StatusConflict, apiv1.CodeNotWaiting},
		"an unknown task":               {run + "nope/approve", e.editorA, `{"approve": true}`, http.StatusConflict, apiv1.CodeNotWaiting},
		"a run that ended":              {"/api/v1/runs/gated-done/nodes/ship/approve", e.editorA, `{"approve": true}`, http.StatusConflict, apiv1.CodeRunPhase},
		"an unknown run, whatever sent": {"/api/v1/runs/gated-nope/nodes/ship/approve", e.editorA, `nonsense`, http.StatusNotFound, apiv1.CodeRunNotFound},
	}
	t.Run("each refusal", func(t *testing.T) { // returns once every case has
		for name, c := range cases {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				resp, b := e.do(t, "POST", c.path, c.token, c.body)
				wantError(t, name, resp, b, c.status, c.code)
			})
		}
	})
	if got, err := e.srv.cfg.Store.GateInputs(t.Context(), "gated-1"); err != nil || len(got) != 0 {
		t.Errorf("GateInputs after refusals = %+v, %v; want none", got, err)
	}
}
