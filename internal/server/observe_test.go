package server

import (
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestMetricsCountRequestsByRoute reads /metrics after a few requests:
// the build is there, and requests are counted and timed by their route's
// pattern, never by a path holding a run's ID.
func TestMetricsCountRequestsByRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := e.submit(t, e.admin, "")
	e.waitDone(t, run.ID)
	e.do(t, "GET", "/api/v1/runs/"+string(run.ID), e.viewer, "")
	e.do(t, "GET", "/api/v1/runs/nope", e.viewer, "")

	resp, b := e.do(t, "GET", "/metrics", e.viewer, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics: %d %s", resp.StatusCode, b)
	}
	got := string(b)
	build := regexp.MustCompile(`kiln_build_info\{commit="[^"]*",go_version="` + regexp.QuoteMeta(runtime.Version()) + `",version="[^"]+"\} 1`)
	if !build.MatchString(got) {
		t.Errorf("no kiln_build_info with the Go version in:\n%s", got)
	}
	for _, want := range []string{
		`kiln_http_requests_total{code="201",method="POST",route="/api/v1/runs"} 1`,
		`kiln_http_requests_total{code="200",method="GET",route="/api/v1/runs/{id}"}`,
		`kiln_http_requests_total{code="404",method="GET",route="/api/v1/runs/{id}"} 1`,
		`kiln_http_request_duration_seconds_bucket{route="/api/v1/runs/{id}",le="+Inf"}`,
		`kiln_http_request_duration_seconds_count{route="/api/v1/runs"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(got, string(run.ID)) || strings.Contains(got, "nope") {
		t.Errorf("a path with an ID became a series:\n%s", got)
	}
}

// TestMetricsNeedATokenUnlessPublic reads /metrics without a token: 401
// by default, the metrics with MetricsPublic.
func TestMetricsNeedATokenUnlessPublic(t *testing.T) {
	t.Parallel()
	if resp, _ := newEnv(t).do(t, "GET", "/metrics", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("metrics without a token: %d, want 401", resp.StatusCode)
	}
	e := newEnvWith(t, func(c *Config) { c.MetricsPublic = true })
	if resp, b := e.do(t, "GET", "/metrics", "", ""); resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "kiln_build_info") {
		t.Errorf("public metrics without a token: %d %.200s", resp.StatusCode, b)
	}
}

// TestMetricsNameTheRootPageSlash asks for the root page: its series'
// route is "/", not the pattern's "/{$}".
func TestMetricsNameTheRootPageSlash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.do(t, "GET", "/", "", "")
	_, b := e.do(t, "GET", "/metrics", e.viewer, "")
	if got := string(b); !strings.Contains(got, `kiln_http_requests_total{code="200",method="GET",route="/"} 1`) || strings.Contains(got, "{$}") {
		t.Errorf("the root page's series is not route=\"/\":\n%s", got)
	}
}
