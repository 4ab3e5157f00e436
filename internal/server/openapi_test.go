package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"sigs.k8s.io/yaml"

	"kiln.dev/kiln/api/openapi"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A YAML body is a file of documents, which the server reads as one:
// the document describes it as text, as clients send it, not as the
// structure its first document parses to.
func init() {
	openapi3filter.RegisterBodyDecoder("application/yaml", openapi3filter.FileBodyDecoder)
}

// conformance checks each exchange against the OpenAPI document: the
// request as the document describes it, and the answer's status, headers
// and body against the operation's.
type conformance struct {
	router routers.Router
	next   http.RoundTripper
	mu     sync.Mutex
	seen   map[string]bool // operation IDs exchanged
	errs   []string
}

func newConformance(t *testing.T) *conformance {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document)
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &conformance{router: router, next: http.DefaultTransport, seen: map[string]bool{}}
}

func (c *conformance) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	c.check(req, body, resp, answer)
	return resp, nil
}

func (c *conformance) check(req *http.Request, body []byte, resp *http.Response, answer []byte) {
	where := fmt.Sprintf("%s %s → %d", req.Method, req.URL.RequestURI(), resp.StatusCode)
	probe := req.Clone(context.Background())
	probe.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := c.router.FindRoute(probe)
	if err != nil {
		c.fail("%s: not an operation of the document: %v", where, err)
		return
	}
	c.mu.Lock()
	c.seen[route.Operation.OperationID] = true
	c.mu.Unlock()
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: opts}
	if resp.StatusCode < 400 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			c.fail("%s: the request does not match the document: %v", where, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts}
	out.SetBodyBytes(answer)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		c.fail("%s: the answer does not match the document: %v\n%s", where, err, answer)
	}
}

func (c *conformance) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

const trainJobYAML = `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: tiny}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {command: ["true"], numNodes: 2, resourcesPerNode: {cpu: 100m}}
`

const templateYAML = `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: nightly}
spec:
  tasks: [{name: a, command: ["true"]}]
`

// TestAnswersMatchTheOpenAPIDocument drives a real server through most of
// its operations, successes and refusals, and checks every exchange
// against the document: what generated clients are built from must be
// what the server does.
func TestAnswersMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := newConformance(t)
	e.client = &http.Client{Transport: c}
	resp, b := e.send(t, "POST", "/api/v1/runs?param=who=api", e.admin, workflowYAML)
	var run apiv1.Run
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &run) != nil {
		t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	e.waitDone(t, run.ID)
	e.mapRun(t, "conform-map", 20)
	for _, x := range []struct{ method, path, token, body string }{ // bodies: YAML for files, JSON else, text for secrets
		{"GET", "/healthz", "", ""},
		{"GET", "/readyz", "", ""},
		{"GET", "/api/v1/version", "", ""},
		{"GET", "/api/v1/whoami", e.viewer, ""},
		{"GET", "/api/v1/whoami", "", ""},
		{"GET", "/api/v1/openapi.json", "", ""},
		{"GET", "/api/v1/schemas/workflow.json", "", ""},
		{"GET", "/api/v1/schemas/pipeline.json", "", ""},
		{"GET", "/api/v1/runs?limit=1&phase=succeeded,failed&since=1h&order=asc", e.viewer, ""},
		{"GET", "/api/v1/runs?phase=done", e.viewer, ""},
		{"GET", "/api/v1/runs", e.none, ""},
		{"GET", "/api/v1/runs/" + string(run.ID), e.viewer, ""},
		{"GET", "/api/v1/runs/" + string(run.ID) + "/events", e.viewer, ""},
		{"GET", "/api/v1/runs/" + string(run.ID) + "/events?tail=2", e.viewer, ""},
		{"GET", "/api/v1/runs/" + string(run.ID) + "/events?limit=2", e.viewer, ""},
		{"GET", "/api/v1/runs/" + string(run.ID) + "?nodes=false", e.viewer, ""},
		{"GET", "/api/v1/runs/conform-map/nodes?limit=5&parent=items&phase=failed,succeeded", e.viewer, ""},
		{"GET", "/api/v1/runs/conform-map/nodes?sinceVersion=0-1", e.viewer, ""},
		{"GET", "/api/v1/runs/conform-map/nodes?continue=nope", e.viewer, ""},
		{"GET", "/api/v1/runs/" + string(run.ID) + "/tasks/greet/logs?timestamps=true", e.viewer, ""},
		{"GET", "/api/v1/runs/" + string(run.ID) + "/trainjob", e.viewer, ""},
		{"POST", "/api/v1/runs/" + string(run.ID) + "/cancel", e.admin, ""},
		{"POST", "/api/v1/runs/" + string(run.ID) + "/cancel", e.viewer, ""},
		{"POST", "/api/v1/runs/" + string(run.ID) + "/rerun", e.admin, `{"mode": "from", "node": "after"}`},
		{"POST", "/api/v1/runs/" + string(run.ID) + "/rerun", e.admin, `{"mode": "from", "node": "nowhere"}`},
		{"POST", "/api/v1/runs", e.admin, strings.Replace(workflowYAML, "command:", "comand:", 1)},
		{"GET", "/api/v1/runs/nosuchrun-12345", e.viewer, ""},
		{"GET", "/api/v1/runtimes", e.viewer, ""},
		{"GET", "/api/v1/runtimes/torch-distributed", e.viewer, ""},
		{"PUT", "/api/v1/secrets/token", e.admin, "s3cr3t"},
		{"PUT", "/api/v1/secrets/Bad_Name", e.admin, "s3cr3t"},
		{"GET", "/api/v1/runs/" + string(run.ID) + "/events?after=abc", e.viewer, ""},
		{"GET", "/api/v1/secrets", e.viewer, ""},
		{"DELETE", "/api/v1/secrets/token", e.admin, ""},
		{"POST", "/api/v1/templates", e.admin, templateYAML},
		{"POST", "/api/v1/runs", e.admin, asJSON(t, workflowYAML)},
		{"POST", "/api/v1/runs", e.admin, asJSON(t, trainJobYAML)},
		{"POST", "/api/v1/apply", e.admin, asJSON(t, templateYAML)},
		{"PUT", "/api/v1/templates/nightly", e.admin, asJSON(t, templateYAML)},
		{"GET", "/api/v1/templates", e.viewer, ""},
		{"GET", "/api/v1/templates/nightly", e.viewer, ""},
		{"PUT", "/api/v1/templates/nightly", e.admin, templateYAML},
		{"DELETE", "/api/v1/templates/nightly", e.admin, ""},
		{"GET", "/api/v1/cache", e.viewer, ""},
		{"POST", "/api/v1/cache/prune", e.admin, `{"all": true}`},
		{"GET", "/api/v1/quotas", e.viewer, ""},
		{"GET", "/api/v1/parties", e.admin, ""},
		{"GET", "/metrics", e.viewer, ""},
		{"DELETE", "/api/v1/runs/" + string(run.ID), e.admin, ""},
	} {
		e.send(t, x.method, x.path, x.token, x.body)
	}
	e.gateAndTrainJob(t)
	for _, msg := range c.errs {
		t.Error(msg)
	}
	for _, id := range []string{"healthz", "submitRun", "listRuns", "getRun", "deleteRun", "rerunRun", "getTaskLogs", "listRunEvents", "listRunNodes", "approveGate", "signalGate", "getTrainJob", "putTemplate", "pruneCache", "apply"} {
		if !c.seen[id] {
			t.Errorf("no exchange of operation %s was checked", id)
		}
	}
}

// asJSON is a YAML document as JSON, as a generated client sends it.
func asJSON(t *testing.T, doc string) string {
	t.Helper()
	b, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// send is do with the Content-Type a client sets: JSON for a body that
// starts with {, YAML for spec files, plain text for a secret's value.
func (e *env) send(t *testing.T, method, path, token, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	switch {
	case body == "":
	case strings.HasPrefix(body, "{"):
		req.Header.Set("Content-Type", "application/json")
	case strings.HasPrefix(body, "apiVersion:"):
		req.Header.Set("Content-Type", "application/yaml")
	default:
		req.Header.Set("Content-Type", "text/plain")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// gateAndTrainJob sends a gate its inputs and reads a TrainJob's run as
// Kubeflow Trainer's TrainJob.
func (e *env) gateAndTrainJob(t *testing.T) {
	t.Helper()
	e.gatedRun(t, "gated-conform", "default", apiv1.PhaseRunning)
	e.send(t, "POST", "/api/v1/runs/gated-conform/nodes/ship/approve", e.admin, `{"approve": true, "reason": "looks good"}`)
	e.send(t, "POST", "/api/v1/runs/gated-conform/nodes/count/signal", e.admin, `{"value": "3"}`)
	e.send(t, "POST", "/api/v1/runs/gated-conform/nodes/count/signal", e.admin, `{"approve": true}`)
	resp, b := e.send(t, "POST", "/api/v1/runs", e.admin, trainJobYAML)
	var job apiv1.Run
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &job) != nil {
		t.Fatalf("submitting a TrainJob: %d %s", resp.StatusCode, b)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); <-time.After(50 * time.Millisecond) {
		if e.waitDone(t, job.ID).Status.Phase.Done() {
			break
		}
	}
	e.do(t, "GET", "/api/v1/runs/"+string(job.ID)+"/trainjob", e.viewer, "")
}

// TestErrorsSpellOutTheirCodesHint submits a misspelt field: the answer
// carries the hint kiln validate prints, which a client cannot look up.
func TestErrorsSpellOutTheirCodesHint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, b := e.do(t, "POST", "/api/v1/runs", e.admin, strings.Replace(workflowYAML, "command:", "comand:", 1))
	var got apiv1.ErrorList
	if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusBadRequest || len(got.Errors) == 0 {
		t.Fatalf("a misspelt field: %d %s", resp.StatusCode, b)
	}
	if first := got.Errors[0]; first.Code != apiv1.CodeUnknownField || first.Hint != apiv1.CodeUnknownField.Hint() {
		t.Errorf("the error is %+v, want %s with the hint %q", first, apiv1.CodeUnknownField, apiv1.CodeUnknownField.Hint())
	}
}
