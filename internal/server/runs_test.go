package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// On every route of one run, a run of a project the token may not see
// is answered exactly as one that does not exist: nothing tells that it
// does.
func TestAForeignRunIsAnsweredAsAnUnknownOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	foreign := e.submit(t, e.admin, "?project=b")
	n := 0
	for _, r := range (&Server{}).routes() {
		method, path, _ := strings.Cut(r.pattern, " ")
		if !strings.Contains(path, "{id}") {
			continue
		}
		n++
		at := func(id apiv1.RunID) string {
			return strings.NewReplacer("{id}", string(id), "{task}", "greet", "{node}", "greet").Replace(path)
		}
		respF, bodyF := e.do(t, method, at(foreign.ID), e.editorA, "")
		respU, bodyU := e.do(t, method, at("hello-nosuchrun"), e.editorA, "")
		wantError(t, r.pattern+" of a foreign run", respF, bodyF, http.StatusNotFound, apiv1.CodeRunNotFound)
		// Each names the run asked for (Run/ID), and nothing else differs.
		sameF, sameU := bytes.ReplaceAll(bodyF, []byte(foreign.ID), []byte("ID")), bytes.ReplaceAll(bodyU, []byte("hello-nosuchrun"), []byte("ID"))
		if respF.StatusCode != respU.StatusCode || !bytes.Equal(sameF, sameU) || respF.Header.Get("Content-Type") != respU.Header.Get("Content-Type") {
			t.Errorf("%s: a foreign run = %d %s, an unknown one = %d %s; want the same", r.pattern, respF.StatusCode, bodyF, respU.StatusCode, bodyU)
		}
	}
	if n < 9 {
		t.Errorf("%d routes of one run, want every one (get, cancel, retry, suspend, unsuspend, events, logs, approve, signal)", n)
	}
}

// wantError checks that a response is the API's error with status and code.
func wantError(t *testing.T, what string, resp *http.Response, body []byte, status int, code apiv1.Code) {
	t.Helper()
	var out struct{ Errors []apiv1.Error }
	err := json.Unmarshal(body, &out)
	if resp.StatusCode != status || err != nil || len(out.Errors) != 1 || out.Errors[0].Code != code {
		t.Errorf("%s: %d %s, want %d with %s", what, resp.StatusCode, body, status, code)
	}
}
