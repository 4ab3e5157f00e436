package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Every refused parameter of a run's nodes, events and document names
// its field and says in its hint what it takes.
func TestRefusedParametersNameTheirFieldWithAHint(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: params}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	r := "/api/v1/runs/" + string(run.ID)
	for _, c := range []struct {
		path, field string
		status      int
		hint        []string // the hint holds each
		not         string   // and not this
	}{
		{r + "/nodes?phase=bogus", "phase", 400, []string{"Skipped", "Retrying"}, "Cancelling"},
		{r + "/nodes?limit=0", "limit", 400, []string{"1 to 5000", "continue"}, "see the message"},
		{r + "/nodes?limit=6000", "limit", 400, []string{"1 to 5000"}, "see the message"},
		{r + "/events?tail=-1", "tail", 400, []string{"tail=N", "limit=N"}, "see the message"},
		{r + "/events?tail=3&limit=2", "tail", 400, []string{"one of tail=N"}, ""},
		{r + "?nodes=no", "nodes", 400, []string{"nodes=false"}, ""},
	} {
		code, body := apiGet(t, base, admin, c.path)
		var e struct{ Errors []apiv1.Error }
		_ = json.Unmarshal([]byte(body), &e)
		ok := code == c.status && len(e.Errors) == 1 && e.Errors[0].Field == c.field
		for _, h := range c.hint {
			ok = ok && strings.Contains(e.Errors[0].Hint, h)
		}
		if !ok || (c.not != "" && strings.Contains(e.Errors[0].Hint, c.not)) {
			t.Errorf("GET %s: %d %s; want %d naming %s, hint with %v", c.path, code, body, c.status, c.field, c.hint)
		}
	}
	for _, ok := range []string{r + "?nodes=true", r + "?nodes=false", r + "/events?tail=2", r + "/events?limit=2"} {
		if code, body := apiGet(t, base, admin, ok); code != 200 {
			t.Errorf("GET %s: %d %s", ok, code, body)
		}
	}
	code, body := apiCall(t, "DELETE", base, admin, "/api/v1/version", "")
	if code != 405 || !strings.Contains(body, "use one of the methods that the Allow header and the error's message list") {
		t.Errorf("DELETE /api/v1/version: %d %s", code, body)
	}
}
