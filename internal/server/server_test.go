package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"kiln.dev/kiln/api/openapi"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/backend/local"
)

func TestMain(m *testing.M) {
	local.RunSandboxIfAsked()
	if home := os.Getenv("KILN_TEST_SUPERVISOR_HOME"); home != "" {
		_ = local.Serve(context.Background(), local.ServeConfig{Home: home, IdleTimeout: time.Minute})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// env is a server over a real embedded kiln, with tokens of each kind.
type env struct {
	url                          string
	srv                          *Server
	ln                           *limitListener
	admin, viewer, editorA, none string
	// client sends the requests of do; nil is http.DefaultClient.
	client *http.Client
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the server's Config changed by configure.
// tempHome is a kiln home removed when the test ends. Attempts outlive
// their engine and supervisor, as they do for users: one that was just
// launched may still write its last file while the home is removed, so
// removing it is tried again for a while rather than failing the test.
func tempHome(t testing.TB) string {
	home, err := os.MkdirTemp("", "kiln-server-test-") //nolint:usetesting // t.TempDir fails the test when an attempt writes while it is removed
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for deadline := time.Now().Add(10 * time.Second); ; <-time.After(20 * time.Millisecond) {
			err := os.RemoveAll(home)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("removing %s: %v", home, err)
				return
			}
		}
	})
	return home
}

// stopSupervisor kills home's supervisor and waits until it is gone, so
// that it writes nothing into home while the test removes it.
func stopSupervisor(t testing.TB, home string) {
	pid := local.SupervisorPID(home)
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Errorf("supervisor %d of %s did not die", pid, home)
			return
		}
		<-time.After(5 * time.Millisecond)
	}
}

func newEnvWith(t testing.TB, configure func(*Config)) *env {
	t.Helper()
	home := tempHome(t)
	a, err := app.Open(t.Context(), app.Config{
		Home:              home,
		SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + home, os.Args[0]},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	cfg := Config{
		Store: a.Store, Engine: a, Secrets: a, Templates: a, Runtimes: a, Cache: a, Limits: Limits{MaxBody: 64 << 10}, Metrics: a.Metrics.Handler(), Requests: a.Metrics,
		Poll: 20 * time.Millisecond,
	}
	if configure != nil {
		configure(&cfg)
	}
	s := New(cfg)
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = s.HTTPServer()                     // served as kiln serve serves it: its timeouts,
	ln := s.Listener(srv.Listener).(*limitListener) // and its bounds on connections
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		a.Close() // first: a running engine starts a supervisor again
		stopSupervisor(t, home)
	})
	e := &env{url: srv.URL, srv: s, ln: ln}
	for _, tok := range []struct {
		dst      *string
		role     string
		projects []string
	}{{&e.admin, "admin", []string{"*"}}, {&e.viewer, "viewer", []string{"*"}}, {&e.editorA, "editor", []string{"a"}}} {
		raw, _, err := CreateToken(t.Context(), a.Store, tok.role, tok.role, tok.projects)
		if err != nil {
			t.Fatal(err)
		}
		*tok.dst = raw
	}
	e.none = "kln_not_a_token"
	return e
}

func (e *env) do(t *testing.T, method, path, token, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	client := e.client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

const workflowYAML = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: hello, labels: {team: ml}}
spec:
  params: [{name: who, default: world}]
  tasks:
  - {name: greet, command: [sh, -c, 'echo "hello $0"', '{{params.who}}']}
  - {name: after, dependsOn: [greet], command: ["true"]}
`

func (e *env) submit(t *testing.T, token, query string) apiv1.Run {
	t.Helper()
	resp, b := e.do(t, "POST", "/api/v1/runs"+query, token, workflowYAML)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %s", resp.StatusCode, b)
	}
	var run apiv1.Run
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	return run
}

func (e *env) waitDone(t *testing.T, id apiv1.RunID) apiv1.Run {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); <-time.After(20 * time.Millisecond) {
		_, b := e.do(t, "GET", "/api/v1/runs/"+string(id), e.admin, "")
		var run apiv1.Run
		if json.Unmarshal(b, &run) == nil && run.Status.Phase.Done() {
			return run
		}
	}
	t.Fatalf("run %s did not finish", id)
	return apiv1.Run{}
}

// TestEveryRouteIsInTheOpenAPIDocument checks the served document against
// the routes, both ways: every route is an operation of it with the role
// the route needs (x-kiln-role), and every operation is a route.
func TestEveryRouteIsInTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]struct {
			Role      string         `json:"x-kiln-role"`
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, r := range (&Server{}).routes() {
		method, path, _ := strings.Cut(r.pattern, " ")
		path = strings.TrimSuffix(path, "{$}") // "/{$}" matches exactly "/"
		if path != "/" && strings.HasSuffix(path, "/") {
			path += "{file}" // a prefix: the document names what follows it
		}
		served[method+" "+path] = true
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("route %s is not in the OpenAPI document", r.pattern)
			continue
		}
		if want := documentedRole(r); op.Role != want {
			t.Errorf("route %s: the document says role %q, the route needs %q", r.pattern, op.Role, want)
		}
		if _, limited := op.Responses["429"]; limited != (path != healthPath) {
			t.Errorf("route %s: a 429 response listed = %t, want it on every route but %s", r.pattern, limited, healthPath)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if !served[strings.ToUpper(method)+" "+path] {
				t.Errorf("the OpenAPI document has %s %s, which the server does not serve", strings.ToUpper(method), path)
			}
		}
	}
}

// documentedRole is the role of r as the OpenAPI document names it.
func documentedRole(r route) string {
	if r.pattern == "GET /metrics" {
		return "viewer" // unless the server runs with --metrics-public
	}
	return map[role]string{public: "public", viewer: "viewer", editor: "editor", admin: "admin", partyRole: "party", channelRole: "channel"}[r.role]
}

func TestSubmitWatchAndRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := e.submit(t, e.editorA, "?project=a&param=who=kiln")
	if run.Project != "a" || run.Params["who"] != "kiln" {
		t.Errorf("run project %q params %v, want a and who=kiln", run.Project, run.Params)
	}
	done := e.waitDone(t, run.ID)
	if done.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", done.Status.Phase, done.Status.Message)
	}
	_, metrics := e.do(t, "GET", "/metrics", e.viewer, "")
	for _, want := range []string{`kiln_runs{phase="Succeeded"} 1`, "kiln_queue_depth", "kiln_reconcile_duration_seconds_count", "kiln_tasks"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if resp, b := e.do(t, "GET", "/api/v1/runs/"+string(run.ID)+"/tasks/greet/logs", e.viewer, ""); string(b) != "hello kiln\n" {
		t.Errorf("logs: %d %q, want hello kiln", resp.StatusCode, b)
	}
	_, b := e.do(t, "GET", "/api/v1/runs/"+string(run.ID)+"/events", e.viewer, "")
	var events struct{ Items []apiv1.Event }
	if err := json.Unmarshal(b, &events); err != nil || len(events.Items) < 5 {
		t.Errorf("events = %s, want the run's transitions", b)
	}
	req, _ := http.NewRequest("GET", e.url+"/api/v1/runs/"+string(run.ID)+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+e.viewer)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sse, n := bufio.NewScanner(resp.Body), 0
	for sse.Scan() { // the stream ends by itself: the run has ended
		if strings.HasPrefix(sse.Text(), "data: ") {
			n++
		}
	}
	if n != len(events.Items) || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("the event stream carried %d events, want %d", n, len(events.Items))
	}
}

func TestAuthAndProjects(t *testing.T) {
	t.Parallel()
	// Two unauthenticated requests per route, from one address: more
	// than the default allowance of a client without a token.
	e := newEnvWith(t, func(c *Config) { c.Limits.ClientBurst = 1000 })
	runB := e.submit(t, e.admin, "?project=b")
	for _, r := range (&Server{}).routes() {
		if r.role == public {
			continue
		}
		method, path, _ := strings.Cut(r.pattern, " ")
		path = strings.NewReplacer("{id}", string(runB.ID), "{task}", "greet", "{node}", "greet").Replace(path)
		for _, token := range []string{"", e.none} {
			if resp, _ := e.do(t, method, path, token, ""); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s with token %q = %d, want 401", method, path, token, resp.StatusCode)
			}
		}
	}
	cases := []struct {
		method, path, token string
		want                int
	}{
		{"POST", "/api/v1/runs", e.viewer, http.StatusForbidden},
		{"POST", "/api/v1/runs?project=b", e.editorA, http.StatusForbidden},
		{"GET", "/api/v1/runs/" + string(runB.ID), e.editorA, http.StatusNotFound},
		{"POST", "/api/v1/runs/" + string(runB.ID) + "/cancel", e.editorA, http.StatusNotFound},
		{"POST", "/api/v1/runs/" + string(runB.ID) + "/cancel", e.viewer, http.StatusForbidden},
		{"GET", "/api/v1/runs?project=b", e.editorA, http.StatusForbidden},
		{"GET", "/api/v1/runs/" + string(runB.ID), e.viewer, http.StatusOK},
		{"GET", "/healthz", "", http.StatusOK},
	}
	for _, c := range cases {
		if resp, b := e.do(t, c.method, c.path, c.token, workflowYAML); resp.StatusCode != c.want {
			t.Errorf("%s %s = %d %s, want %d", c.method, c.path, resp.StatusCode, b, c.want)
		}
	}
	_, b := e.do(t, "GET", "/api/v1/runs", e.editorA, "")
	if strings.Contains(string(b), string(runB.ID)) {
		t.Error("a token of project a lists runs of project b")
	}
}

func TestPagesAndBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 3 {
		e.submit(t, e.admin, "")
	}
	_, b := e.do(t, "GET", "/api/v1/runs?limit=2&label=team=ml", e.viewer, "")
	var page apiv1.RunList
	if err := json.Unmarshal(b, &page); err != nil || len(page.Items) != 2 || page.Next == "" {
		t.Fatalf("first page = %s", b)
	}
	_, b = e.do(t, "GET", "/api/v1/runs?limit=2&cursor="+page.Next, e.viewer, "")
	var page2 apiv1.RunList
	if err := json.Unmarshal(b, &page2); err != nil || len(page2.Items) != 1 || page2.Next != "" {
		t.Fatalf("second page = %s", b)
	}
	id := page2.Items[0].ID
	cases := []struct {
		method, path, body string
		want               int
		code               apiv1.Code
	}{
		{"POST", "/api/v1/runs", "{{{not yaml", http.StatusBadRequest, apiv1.CodeParse},
		{"POST", "/api/v1/runs", "apiVersion: kiln.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: x}\n", http.StatusBadRequest, apiv1.CodeKind},
		{"POST", "/api/v1/runs", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: x}\nspec: {tasks: [{name: t, command: [x], resources: {cpu: 999}}]}\n", http.StatusUnprocessableEntity, apiv1.CodeTooLarge},
		{"POST", "/api/v1/runs", strings.Repeat("#", 70<<10), http.StatusRequestEntityTooLarge, apiv1.CodeBodyTooLarge},
		{"GET", "/api/v1/runs/nope", "", http.StatusNotFound, apiv1.CodeRunNotFound},
		{"GET", "/api/v1/runs/" + string(id) + "/tasks/..%2F..%2Fetc/logs", "", http.StatusNotFound, apiv1.CodeRunNotFound},
		{"GET", "/api/v1/runs?cursor=@@@", "", http.StatusBadRequest, apiv1.CodeBadRequest},
	}
	for _, c := range cases {
		resp, b := e.do(t, c.method, c.path, e.admin, c.body)
		var out struct{ Errors []apiv1.Error }
		_ = json.Unmarshal(b, &out)
		if resp.StatusCode != c.want || len(out.Errors) == 0 || out.Errors[0].Code != c.code {
			t.Errorf("%s %s = %d %s, want %d with %s", c.method, c.path, resp.StatusCode, b, c.want, c.code)
		}
	}
}

func TestAFullStoreIsTold(t *testing.T) {
	t.Parallel()
	full := &apiv1.Error{Code: apiv1.CodeStoreFull, File: "/srv/kiln/kiln.db", Message: "the disk holding the store is full (0 bytes free)"}
	status, errs := statusOf(fmt.Errorf("saving the run: %w", full))
	if status != http.StatusInsufficientStorage || len(errs) != 1 || errs[0].Code != apiv1.CodeStoreFull ||
		errs[0].File != "" || !strings.Contains(errs[0].Message, "0 bytes free") {
		t.Errorf("statusOf(full store) = %d %+v, want 507 with KLN-5004 and the free space, not the server's path", status, errs)
	}
	if full.File == "" {
		t.Error("statusOf changed the error it was given")
	}
	if status, _ := statusOf(&apiv1.Error{Code: apiv1.CodeStoreCorrupt, Message: "damaged"}); status != http.StatusInternalServerError {
		t.Errorf("statusOf(damaged store) = %d, want 500", status)
	}
}
