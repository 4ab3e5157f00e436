package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"kiln.dev/kiln/internal/buildinfo"
)

// httpMetrics count the API's requests by route: the pattern the server
// routes them by ("/api/v1/runs/{id}"), never the path itself, so that
// run IDs do not become series.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics() httpMetrics {
	return httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kiln_http_requests_total",
			Help: "HTTP requests answered, by route (the pattern, not the path), method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kiln_http_request_duration_seconds",
			Help: "Time taken to answer an HTTP request, by route; a stream (events, logs) counts until it ends.",
			// 1ms to about 33 minutes: streams last as long as their runs.
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 11),
		}, []string{"route"}),
	}
}

// Request records one request the API answered: its route pattern,
// method, status code and how long it took.
func (m *Metrics) Request(route, method string, code int, d time.Duration) {
	m.http.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.http.duration.WithLabelValues(route).Observe(d.Seconds())
}

// newBuildInfo is kiln_build_info: the binary's version, commit and Go
// version as labels, always 1.
func newBuildInfo() prometheus.Collector {
	in := buildinfo.Read()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "kiln_build_info",
		Help:        "The kiln binary serving: its version, commit and Go version as labels; always 1.",
		ConstLabels: prometheus.Labels{"version": in.Version, "commit": in.Commit, "go_version": in.Go},
	})
	g.Set(1)
	return g
}
