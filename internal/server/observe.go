package server

import (
	"net/http"
	"strings"
	"time"
)

// RequestObserver records each request the server answers (the metrics'
// kiln_http_requests_total and kiln_http_request_duration_seconds).
type RequestObserver interface {
	// Request records a request of route (its pattern's path, such as
	// "/api/v1/runs/{id}"), with method, answered code after d.
	Request(route, method string, code int, d time.Duration)
}

// observe records each request of route rt that h answers, and logs it
// at debug level (kiln serve -v).
func (s *Server) observe(rt route, h http.Handler) http.Handler {
	path := routeLabel(rt.pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		d := time.Since(start)
		if s.cfg.Requests != nil {
			s.cfg.Requests.Request(path, r.Method, sw.code, d)
		}
		s.cfg.Log.Debug("request", "method", r.Method, "route", path, "code", sw.code, "duration_s", d.Seconds())
	})
}

// routeLabel is the path of a route's pattern, as metrics and the log
// name it: "/" for the root page's "GET /{$}" (the {$} only says the
// pattern matches that path exactly).
func routeLabel(pattern string) string {
	_, path, _ := strings.Cut(pattern, " ")
	return strings.TrimSuffix(path, "{$}")
}

// statusWriter remembers the status of the response it writes. Unwrap
// lets http.ResponseController reach the connection (to flush a stream,
// move its deadlines).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the response it wraps.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
