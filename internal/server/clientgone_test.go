package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A request whose client went away is no failure of the server: it is
// counted as 499 and logged at debug level, never as an error.
func TestAClientThatWentAwayIsNoError(t *testing.T) {
	var logged bytes.Buffer
	e := newEnvWith(t, func(c *Config) {
		c.Log = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/api/v1/runs", nil)
	rec := httptest.NewRecorder()
	e.srv.writeError(rec, req, context.Canceled)
	if rec.Code != statusClientClosed {
		t.Errorf("status = %d, want %d", rec.Code, statusClientClosed)
	}
	if strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("a client gone was logged as an error:\n%s", logged.String())
	}
	// A request still wanted whose work was cancelled is a failure.
	rec = httptest.NewRecorder()
	e.srv.writeError(rec, httptest.NewRequest(http.MethodGet, "/api/v1/runs", nil), context.Canceled)
	if rec.Code != http.StatusInternalServerError || !strings.Contains(logged.String(), "request failed") {
		t.Errorf("cancelled work for a live client: status %d, log %q; want 500, logged", rec.Code, logged.String())
	}
}
