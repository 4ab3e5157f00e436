// Package metrics exposes kiln's Prometheus metrics: runs and tasks by
// phase and by outcome, training jobs by framework, the engine's queue
// depth, reconcile latency, admission and queue waits, run durations, the
// API's requests, the build, and the Go runtime and process collectors.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Source is where gauges are read at scrape time.
type Source interface {
	// RunsByPhase counts every run in the store by phase.
	RunsByPhase(ctx context.Context) (map[apiv1.Phase]int, error)
	// TasksByPhase counts the tasks of the runs the engine works on.
	TasksByPhase() map[apiv1.Phase]int
	// QueueDepth is how many runs wait for a reconcile.
	QueueDepth() int
}

// Metrics holds kiln's collectors in a registry of their own.
type Metrics struct {
	registry  *prometheus.Registry
	reconcile prometheus.Histogram
	admission prometheus.Histogram
	deleted   *prometheus.CounterVec
	http      httpMetrics
	engine    engineMetrics
}

// New returns metrics; SetSource adds the gauges read at scrape time.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		reconcile: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kiln_reconcile_duration_seconds",
			Help: "Time one reconcile round of a run takes.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		admission: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kiln_admission_wait_seconds",
			Help: "Time a task or gang waited for room in the pool before it started.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 12),
		}),
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kiln_runs_deleted_total",
			Help: "Runs deleted, by reason: request, ttl, history, orphan (a directory without a run).",
		}, []string{"reason"}),
		http:   newHTTPMetrics(),
		engine: newEngineMetrics(),
	}
	m.registry.MustRegister(m.reconcile, m.admission, m.deleted, m.http.requests, m.http.duration, newBuildInfo(),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.registry.MustRegister(m.engine.collectors()...)
	return m
}

// SetSource registers the gauges read from src.
func (m *Metrics) SetSource(src Source) {
	m.registry.MustRegister(&gauges{
		src:   src,
		runs:  prometheus.NewDesc("kiln_runs", "Runs in the store by phase.", []string{"phase"}, nil),
		tasks: prometheus.NewDesc("kiln_tasks", "Tasks of the runs the engine works on, by phase.", []string{"phase"}, nil),
		queue: prometheus.NewDesc("kiln_queue_depth", "Runs waiting for a reconcile.", nil, nil),
	})
}

// Reconciled records one reconcile round.
func (m *Metrics) Reconciled(d time.Duration) { m.reconcile.Observe(d.Seconds()) }

// Admitted records how long a task waited for room before it started.
func (m *Metrics) Admitted(wait time.Duration) { m.admission.Observe(wait.Seconds()) }

// Deleted counts one run deleted, or one orphan directory removed, for reason.
func (m *Metrics) Deleted(reason string) { m.deleted.WithLabelValues(reason).Inc() }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// gauges reads its values at scrape time.
type gauges struct {
	src                Source
	runs, tasks, queue *prometheus.Desc
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- g.runs
	ch <- g.tasks
	ch <- g.queue
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if runs, err := g.src.RunsByPhase(ctx); err == nil {
		for phase, n := range runs {
			ch <- prometheus.MustNewConstMetric(g.runs, prometheus.GaugeValue, float64(n), string(phase))
		}
	}
	for phase, n := range g.src.TasksByPhase() {
		ch <- prometheus.MustNewConstMetric(g.tasks, prometheus.GaugeValue, float64(n), string(phase))
	}
	ch <- prometheus.MustNewConstMetric(g.queue, prometheus.GaugeValue, float64(g.src.QueueDepth()))
}
