package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func runtimeText(kind, name string) string {
	return "apiVersion: kiln.dev/v1alpha1\nkind: " + kind + "\nmetadata: {name: " + name + "}\nspec: {mlPolicy: {plain: {}}}\n"
}

func TestRuntimesAreAppliedListedAndDeleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, b := e.do(t, "POST", "/api/v1/apply?project=a", e.editorA, runtimeText("TrainingRuntime", "mine"))
	var res apiv1.ApplyResult
	want := []apiv1.Applied{{Kind: "TrainingRuntime", Name: "mine", Project: "a", Version: 1, Action: apiv1.ApplyCreated}}
	if err := json.Unmarshal(b, &res); err != nil || resp.StatusCode != http.StatusOK || len(res.Items) != 1 || res.Items[0] != want[0] {
		t.Fatalf("POST apply = %d %s, want 200 and %+v", resp.StatusCode, b, want)
	}
	resp, b = e.do(t, "POST", "/api/v1/apply", e.admin, runtimeText("ClusterTrainingRuntime", "plain"))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"kind":"ClusterTrainingRuntime","name":"plain","version":1,"action":"created"`) {
		t.Errorf("an admin applies a ClusterTrainingRuntime = %d %s", resp.StatusCode, b)
	}

	_, b = e.do(t, "GET", "/api/v1/runtimes?project=a", e.viewer, "")
	var list struct{ Items []apiv1.TrainingRuntime }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	sources := map[string][]apiv1.RuntimeSource{}
	for _, rt := range list.Items {
		sources[rt.Metadata.Name] = append(sources[rt.Metadata.Name], rt.Status.Source)
	}
	if got := sources["mine"]; len(got) != 1 || got[0] != apiv1.RuntimeSourceStored {
		t.Errorf("mine is listed as %v, want stored", got)
	}
	if got := sources["plain"]; len(got) != 2 || got[0] != apiv1.RuntimeSourceStored || got[1] != apiv1.RuntimeSourceOverridden {
		t.Errorf("plain is listed as %v, want the stored one, then the built-in one overridden", got)
	}

	resp, b = e.do(t, "GET", "/api/v1/runtimes/mine?project=a", e.viewer, "")
	var rt apiv1.TrainingRuntime
	if err := json.Unmarshal(b, &rt); err != nil || resp.StatusCode != http.StatusOK || rt.Status.Version != 1 || rt.Status.Project != "a" {
		t.Errorf("GET mine = %d %s", resp.StatusCode, b)
	}
	if resp, _ := e.do(t, "DELETE", "/api/v1/runtimes/mine?project=a", e.editorA, ""); resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE mine = %d, want 204", resp.StatusCode)
	}
	resp, b = e.do(t, "GET", "/api/v1/runtimes/mine?project=a", e.viewer, "")
	wantError(t, "GET after DELETE", resp, b, http.StatusNotFound, apiv1.CodeNoRuntime)
	resp, b = e.do(t, "GET", "/api/v1/runtimes/mine?project=a&version=1", e.viewer, "")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET version 1 after DELETE = %d %s, want it still readable", resp.StatusCode, b)
	}
}

func TestRuntimeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cases := []struct {
		what, method, path, token, body string
		status                          int
		code                            apiv1.Code
	}{
		{"a viewer applies", "POST", "/api/v1/apply", e.viewer, runtimeText("TrainingRuntime", "rt"), http.StatusForbidden, apiv1.CodeForbidden},
		{"a token of a applies in b", "POST", "/api/v1/apply?project=b", e.editorA, runtimeText("TrainingRuntime", "rt"), http.StatusForbidden, apiv1.CodeForbidden},
		{"a token of a applies for every project", "POST", "/api/v1/apply?project=a", e.editorA, runtimeText("ClusterTrainingRuntime", "rt"), http.StatusForbidden, apiv1.CodeForbidden},
		{"a token of a deletes for every project", "DELETE", "/api/v1/runtimes/rt?project=a&kind=ClusterTrainingRuntime", e.editorA, "", http.StatusForbidden, apiv1.CodeForbidden},
		{"a viewer deletes", "DELETE", "/api/v1/runtimes/rt", e.viewer, "", http.StatusForbidden, apiv1.CodeForbidden},
		{"a token of a reads b", "GET", "/api/v1/runtimes?project=b", e.editorA, "", http.StatusForbidden, apiv1.CodeForbidden},
		{"an invalid runtime", "POST", "/api/v1/apply?project=a", e.editorA, strings.Replace(runtimeText("TrainingRuntime", "rt"), "plain: {}", "plain: {}, jax: {}", 1), http.StatusBadRequest, apiv1.CodeNoMLPolicy},
		{"a kind kiln does not know", "GET", "/api/v1/runtimes/rt?kind=Runtime", e.viewer, "", http.StatusBadRequest, apiv1.CodeRuntimeRef},
		{"a bad version", "GET", "/api/v1/runtimes/rt?version=0", e.viewer, "", http.StatusBadRequest, apiv1.CodeBadRequest},
		{"a missing runtime", "DELETE", "/api/v1/runtimes/rt?project=a", e.editorA, "", http.StatusNotFound, apiv1.CodeNoRuntime},
		{"a built-in runtime", "DELETE", "/api/v1/runtimes/mpi?kind=ClusterTrainingRuntime", e.admin, "", http.StatusConflict, apiv1.CodeBuiltinRuntime},
	}
	for _, c := range cases {
		resp, b := e.do(t, c.method, c.path, c.token, c.body)
		wantError(t, c.what, resp, b, c.status, c.code)
	}
	if _, b := e.do(t, "GET", "/api/v1/runtimes?project=a", e.viewer, ""); strings.Contains(string(b), `"stored"`) {
		t.Errorf("runtimes after the refusals = %s; none is stored", b)
	}
}
