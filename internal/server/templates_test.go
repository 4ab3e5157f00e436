package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const scoreTemplate = `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: score}
spec:
  params: [{name: num}]
  tasks:
  - name: calc
    command: [sh, -c, 'echo $(({{params.num}} * FACTOR)) > $KILN_OUTPUTS/s']
    outputs: {parameters: [{name: s}]}
  outputs:
    parameters: [{name: score, value: "{{tasks.calc.outputs.parameters.s}}"}]
`

const runsScore = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: main}
spec:
  tasks: [{name: eval, workflow: {name: score, params: [{name: num, value: "7"}]}}]
  outputs:
    parameters: [{name: score, value: "{{tasks.eval.outputs.parameters.score}}"}]
`

func TestTemplatesAreStoredPerProjectAndRunByName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, b := e.do(t, "PUT", "/api/v1/templates/score?project=a", e.editorA, strings.Replace(scoreTemplate, "FACTOR", "6", 1))
	var stored apiv1.WorkflowTemplate
	if err := json.Unmarshal(b, &stored); err != nil || resp.StatusCode != http.StatusCreated || stored.Status == nil || stored.Status.Project != "a" {
		t.Fatalf("PUT a new template = %d %s, want 201 with it stored in project a", resp.StatusCode, b)
	}
	if resp, b := e.do(t, "PUT", "/api/v1/templates/score?project=a", e.editorA, strings.Replace(scoreTemplate, "FACTOR", "6", 1)); resp.StatusCode != http.StatusOK {
		t.Errorf("PUT it again = %d %s, want 200: replaced", resp.StatusCode, b)
	}

	resp, b = e.do(t, "POST", "/api/v1/runs?project=a", e.editorA, runsScore)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submitting a run of the template = %d %s", resp.StatusCode, b)
	}
	var run apiv1.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	done := e.waitDone(t, run.ID)
	if done.Status.Phase != apiv1.PhaseSucceeded || done.Status.Outputs == nil || done.Status.Outputs.Parameters["score"] != "42" {
		t.Errorf("run = %s %q outputs %+v, want Succeeded with score 42 from the stored template", done.Status.Phase, done.Status.Message, done.Status.Outputs)
	}
	if len(done.Subworkflows) != 1 || done.Subworkflows[0].Kind != apiv1.KindWorkflowTemplate {
		t.Errorf("run subworkflows = %+v, want its copy of WorkflowTemplate/score", done.Subworkflows)
	}

	resp, b = e.do(t, "POST", "/api/v1/runs?project=b", e.admin, runsScore)
	wantError(t, "a run of project b, which stores no score", resp, b, http.StatusBadRequest, apiv1.CodeSubworkflow)

	_, b = e.do(t, "GET", "/api/v1/templates?project=a", e.viewer, "")
	var list struct {
		Project string
		Items   []apiv1.WorkflowTemplate
	}
	if err := json.Unmarshal(b, &list); err != nil || list.Project != "a" || len(list.Items) != 1 || list.Items[0].Metadata.Name != "score" {
		t.Errorf("GET templates of a = %s, want score alone", b)
	}
	if _, b := e.do(t, "GET", "/api/v1/templates?project=b", e.viewer, ""); !strings.Contains(string(b), `"items":[]`) {
		t.Errorf("GET templates of b = %s, want none", b)
	}

	if resp, _ := e.do(t, "DELETE", "/api/v1/templates/score?project=a", e.editorA, ""); resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE = %d, want 204", resp.StatusCode)
	}
	resp, b = e.do(t, "GET", "/api/v1/templates/score?project=a", e.viewer, "")
	wantError(t, "GET after DELETE", resp, b, http.StatusNotFound, apiv1.CodeNoTemplate)
	resp, b = e.do(t, "DELETE", "/api/v1/templates/score?project=a", e.editorA, "")
	wantError(t, "DELETE twice", resp, b, http.StatusNotFound, apiv1.CodeNoTemplate)
	resp, b = e.do(t, "POST", "/api/v1/runs?project=a", e.editorA, runsScore)
	wantError(t, "a run after the template was deleted", resp, b, http.StatusBadRequest, apiv1.CodeSubworkflow)
}

func TestTemplateRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	good := strings.Replace(scoreTemplate, "FACTOR", "6", 1)
	cases := []struct {
		what, method, path, token, body string
		status                          int
		code                            apiv1.Code
	}{
		{"a viewer writes", "PUT", "/api/v1/templates/score", e.viewer, good, http.StatusForbidden, apiv1.CodeForbidden},
		{"a token of a writes b", "POST", "/api/v1/templates?project=b", e.editorA, good, http.StatusForbidden, apiv1.CodeForbidden},
		{"a token of a reads b", "GET", "/api/v1/templates?project=b", e.editorA, "", http.StatusForbidden, apiv1.CodeForbidden},
		{"a token of a deletes in b", "DELETE", "/api/v1/templates/score?project=b", e.editorA, "", http.StatusForbidden, apiv1.CodeForbidden},
		{"the path names another template", "PUT", "/api/v1/templates/other?project=a", e.editorA, good, http.StatusBadRequest, apiv1.CodeInvalidValue},
		{"params go with a run", "POST", "/api/v1/templates?project=a&param=num=1", e.editorA, good, http.StatusBadRequest, apiv1.CodeBadRequest},
		{
			"a template that does not compile", "POST", "/api/v1/templates?project=a&file=t.yaml", e.editorA,
			strings.Replace(good, "{{params.num}}", "{{params.nope}}", 1), http.StatusBadRequest, apiv1.CodeTemplate,
		},
		{
			"a training runtime", "POST", "/api/v1/templates?project=a", e.editorA,
			"apiVersion: kiln.dev/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: rt}\nspec: {}\n", http.StatusBadRequest, apiv1.CodeKind,
		},
		{"an unknown template", "GET", "/api/v1/templates/nope?project=a", e.editorA, "", http.StatusNotFound, apiv1.CodeNoTemplate},
	}
	for _, c := range cases {
		resp, b := e.do(t, c.method, c.path, c.token, c.body)
		wantError(t, c.what, resp, b, c.status, c.code)
	}
	resp, b := e.do(t, "POST", "/api/v1/templates?project=a&file=t.yaml", e.editorA, strings.Replace(good, "{{params.num}}", "{{params.nope}}", 1))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"file":"t.yaml","object":"WorkflowTemplate/score","field":"spec.tasks[0].command[2]"`) {
		t.Errorf("a bad template = %d %s, want its file, object and field named", resp.StatusCode, b)
	}
	if _, b := e.do(t, "GET", "/api/v1/templates?project=a", e.viewer, ""); !strings.Contains(string(b), `"items":[]`) {
		t.Errorf("templates of a after the refusals = %s, want none stored", b)
	}
}
