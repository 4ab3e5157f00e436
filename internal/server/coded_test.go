package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// codedAnswer checks that an answer of status 400 or more is JSON with
// errors, each with a code kiln defines, and returns the first code.
func codedAnswer(t *testing.T, what string, resp *http.Response, body []byte) apiv1.Code {
	t.Helper()
	if resp.StatusCode < http.StatusBadRequest {
		return ""
	}
	var out apiv1.ErrorList
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: %d with Content-Type %q, want application/json: %q", what, resp.StatusCode, ct, body)
		return ""
	}
	if err := json.Unmarshal(body, &out); err != nil || len(out.Errors) == 0 {
		t.Errorf("%s: %d %q is not a list of errors (%v)", what, resp.StatusCode, body, err)
		return ""
	}
	for _, e := range out.Errors {
		if !slices.ContainsFunc(apiv1.CodeInfos(), func(c apiv1.CodeInfo) bool { return c.Code == e.Code }) || e.Message == "" {
			t.Errorf("%s: %d error %+v has no code kiln defines, or no message", what, resp.StatusCode, e)
		}
	}
	return out.Errors[0].Code
}

// pathParam is a {name} of a route's pattern, or its trailing {$}.
var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// requestPath is a path a route takes, each parameter an object that does
// not exist; a prefix route gets a file beneath it.
func requestPath(pattern string) (method, path string) {
	method, path, _ = strings.Cut(pattern, " ")
	path = pathParam.ReplaceAllStringFunc(path, func(p string) string {
		if p == "{$}" {
			return ""
		}
		return "nosuch"
	})
	if path != "/" && strings.HasSuffix(path, "/") {
		path += "nosuch.js"
	}
	return method, path
}

// panicky is the engine of a server whose cancel fails by panicking.
type panicky struct{ Engine }

func (panicky) Cancel(_ context.Context, id apiv1.RunID) error {
	panic("cancel " + string(id) + ": a bug")
}

// TestEveryErrorAnswerIsCodedJSON sends every route of a real server the
// requests that are refused before a route reads them (no token, a role
// too small, a body over the limit, an object that does not exist, a
// wrong method, junk parameters and bodies), then the refusals of the
// handlers kiln does not write (the UI's file server, the metrics
// handler) and a handler's panic: every error answer must be JSON with a
// code kiln defines.
func TestEveryErrorAnswerIsCodedJSON(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) {
		c.Engine = panicky{c.Engine}
		c.Limits.ClientRate, c.Limits.ClientBurst = 1e6, 1e6 // the sweep's many requests without a token
		c.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "gathering the metrics failed", http.StatusInternalServerError)
		})
	})
	run := e.submit(t, e.admin, "")
	limit := e.srv.cfg.Limits.MaxBody
	statuses := map[int]int{}
	for _, rt := range e.srv.routes() {
		method, path := requestPath(rt.pattern)
		for _, tc := range []struct {
			what, method, path, token, body string
			length                          int64 // a Content-Length over the limit; 0: the body's
		}{
			{"no token", method, path, "", "", 0},
			{"a bad token", method, path, e.none, "", 0},
			{"a viewer", method, path, e.viewer, "", 0},
			{"junk", method, path + "?limit=x&after=y&since=z&phase=w&kind=v&version=u&follow=maybe", e.admin, "{not json", 0},
			{"a body over the limit", method, path, e.admin, "", limit + 1},
			{"a streamed body over the limit", method, path, e.admin, strings.Repeat("x", int(limit)+1), -1},
			{"a wrong method", "PATCH", path, e.admin, "", 0},
		} {
			req, _ := http.NewRequest(tc.method, e.url+tc.path, strings.NewReader(tc.body))
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.length != 0 {
				req.ContentLength = tc.length
			}
			if tc.length > 0 {
				req.Body = io.NopCloser(strings.NewReader(strings.Repeat("x", int(tc.length))))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s with %s: %v", tc.method, tc.path, tc.what, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			codedAnswer(t, fmt.Sprintf("%s %s with %s", tc.method, tc.path, tc.what), resp, body)
			statuses[resp.StatusCode]++
		}
	}
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge} {
		if statuses[status] == 0 {
			t.Errorf("no request was answered %d: the sweep does not reach it (%v)", status, statuses)
		}
	}
	for _, tc := range []struct {
		what, method, path, token, header string
		status                            int
		code                              apiv1.Code
	}{
		{"a UI file that does not exist", "GET", "/ui/nosuch.js", "", "", http.StatusNotFound, apiv1.CodeNoUIFile},
		{"a range past the UI's page", "GET", "/", "", "bytes=999999999-", http.StatusRequestedRangeNotSatisfiable, apiv1.CodeUnsatisfied},
		{"the metrics handler's text error", "GET", "/metrics", e.viewer, "", http.StatusInternalServerError, apiv1.CodeInternal},
		{"a handler's panic", "POST", "/api/v1/runs/" + string(run.ID) + "/cancel", e.admin, "", http.StatusInternalServerError, apiv1.CodeInternal},
	} {
		req, _ := http.NewRequest(tc.method, e.url+tc.path, nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		if tc.header != "" {
			req.Header.Set("Range", tc.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if code := codedAnswer(t, tc.what, resp, body); resp.StatusCode != tc.status || code != tc.code {
			t.Errorf("%s: %d %s, want %d with %s", tc.what, resp.StatusCode, body, tc.status, tc.code)
		}
	}
	if resp, body := e.do(t, "GET", "/healthz", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("after a handler's panic, /healthz answers %d %s", resp.StatusCode, body)
	}
}

// TestPlainHTTPToTheHTTPSPortIsCodedJSON sends plain HTTP to a server
// that serves HTTPS, as kiln serve --tls-cert does: the answer is a coded
// JSON 400, and HTTPS still works.
func TestPlainHTTPToTheHTTPSPortIsCodedJSON(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	srv.Listener = s.TLSListener(srv.Listener)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	plain := strings.Replace(srv.URL, "https://", "http://", 1)
	resp, err := http.Get(plain + "/api/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code := codedAnswer(t, "plain HTTP", resp, body); resp.StatusCode != http.StatusBadRequest || code != apiv1.CodeHTTPSOnly {
		t.Errorf("plain HTTP to the HTTPS port: %d %s, want 400 with %s", resp.StatusCode, body, apiv1.CodeHTTPSOnly)
	}
	resp, err = srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" || resp.TLS == nil {
		t.Errorf("HTTPS beside it: %d %q (TLS %v), want 200 ok", resp.StatusCode, body, resp.TLS != nil)
	}
}
