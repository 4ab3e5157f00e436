package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A token past its allowance gets 429 with Retry-After and KLN-4012, in
// the API's error shape; other tokens go on. Without a known token the
// client's address has an allowance of its own; /healthz has none.
func TestRequestsBeyondTheRateAre429(t *testing.T) {
	t.Parallel()
	// Refilled so slowly that no request of this test gets a new one.
	e := newEnvWith(t, func(c *Config) {
		c.Limits.Rate, c.Limits.Burst = 0.001, 3
		c.Limits.ClientRate, c.Limits.ClientBurst = 0.001, 2
	})
	for i := range 3 {
		if resp, b := e.do(t, "GET", "/api/v1/runs", e.viewer, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d of a burst of 3: %d %s", i+1, resp.StatusCode, b)
		}
	}
	resp, b := e.do(t, "GET", "/api/v1/runs", e.viewer, "")
	wantRateLimited(t, "a 4th request of the viewer", resp, b)
	if resp, b := e.do(t, "GET", "/api/v1/runs", e.admin, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("another token's request: %d %s, want 200", resp.StatusCode, b)
	}

	for range 2 {
		if resp, b := e.do(t, "GET", "/readyz", "", ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("/readyz: %d %s", resp.StatusCode, b)
		}
	}
	resp, b = e.do(t, "GET", "/readyz", "", "")
	wantRateLimited(t, "a 3rd request without a token", resp, b)
	resp, b = e.do(t, "GET", "/api/v1/runs", e.none, "")
	wantRateLimited(t, "an unknown token from an address out of allowance", resp, b)
	for range 10 {
		if resp, _ := e.do(t, "GET", "/healthz", "", ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz: %d, want it never limited", resp.StatusCode)
		}
	}
	if resp, b := e.do(t, "GET", "/api/v1/runs", e.admin, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("a known token from the same address: %d %s, want 200", resp.StatusCode, b)
	}
}

func wantRateLimited(t *testing.T, what string, resp *http.Response, body []byte) {
	t.Helper()
	var out struct{ Errors []apiv1.Error }
	_ = json.Unmarshal(body, &out)
	if resp.StatusCode != http.StatusTooManyRequests || len(out.Errors) != 1 || out.Errors[0].Code != apiv1.CodeRateLimited {
		t.Errorf("%s: %d %s, want 429 with %s", what, resp.StatusCode, body, apiv1.CodeRateLimited)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("%s: Retry-After %q, want a number of seconds", what, resp.Header.Get("Retry-After"))
	}
}

// Buckets unused long enough to have filled up again are forgotten, so
// a stream of new addresses or tokens does not grow memory for ever.
func TestIdleBucketsAreForgotten(t *testing.T) {
	t.Parallel()
	l := newLimiters(10, 20) // fills up in 2s; forgotten after a minute
	now := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return now }
	for i := range 1000 {
		if err := l.take(fmt.Sprint("client ", i)); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		_ = l.take("busy")
	}
	if err := l.take("busy"); err == nil {
		t.Fatal("a 21st request at once was let through")
	}
	now = now.Add(59 * time.Second)
	_ = l.take("recent")
	if n := l.size(); n != 1002 {
		t.Errorf("%d buckets before a minute has passed, want 1002", n)
	}
	now = now.Add(2 * time.Second)
	_ = l.take("new")
	if n := l.size(); n != 2 {
		t.Errorf("%d buckets after a minute, want 2: the one used 2s ago and the new one", n)
	}
	if newLimiters(-1, 0).take("anyone") != nil {
		t.Error("a negative rate limits requests, want none limited")
	}
}
