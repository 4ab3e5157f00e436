package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// engineMetrics count what the engine's saved rounds changed: runs and
// tasks by outcome, how long runs wait and last, and training jobs by
// framework, as training-operator counts its jobs.
type engineMetrics struct {
	runsEnded, tasksEnded                 *prometheus.CounterVec
	runWait                               prometheus.Histogram
	runDuration                           *prometheus.HistogramVec
	jobsCreated, jobsRestarted            *prometheus.CounterVec
	jobsSucceeded, jobsFailed, jobsOthers *prometheus.CounterVec
}

func newEngineMetrics() engineMetrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return engineMetrics{
		runsEnded:  counter("kiln_runs_finished_total", "Runs that ended, by phase: Succeeded, Failed or Cancelled.", "phase"),
		tasksEnded: counter("kiln_tasks_finished_total", "Tasks (map items, gates and subworkflows included) that ended, by phase.", "phase"),
		runWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "kiln_run_queue_wait_seconds",
			Help: "Time from a run's submission to the start of its first task.",
			// 10ms to about 45 hours.
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 13),
		}),
		runDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "kiln_run_duration_seconds",
			Help: "Time from a run's start (its submission if no task started) to its end, by phase.",
			// 100ms to about 19 days.
			Buckets: prometheus.ExponentialBuckets(0.1, 4, 12),
		}, []string{"phase"}),
		jobsCreated:   counter("kiln_training_jobs_created_total", "Training jobs started, by framework: the first attempt of each try of a run.", "framework"),
		jobsRestarted: counter("kiln_training_jobs_restarted_total", "Training jobs restarted (an attempt after one that failed), by framework.", "framework"),
		jobsSucceeded: counter("kiln_training_jobs_successful_total", "Training jobs that succeeded, by framework.", "framework"),
		jobsFailed:    counter("kiln_training_jobs_failed_total", "Training jobs that failed for good (their retries spent), by framework.", "framework"),
		jobsOthers:    counter("kiln_training_jobs_ended_total", "Training jobs that ended, by framework and phase (Succeeded, Failed, Cancelled, Skipped).", "framework", "phase"),
	}
}

func (e engineMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		e.runsEnded, e.tasksEnded, e.runWait, e.runDuration,
		e.jobsCreated, e.jobsRestarted, e.jobsSucceeded, e.jobsFailed, e.jobsOthers,
	}
}

// RunStarted records how long a run waited before its first task started.
func (m *Metrics) RunStarted(wait time.Duration) { m.engine.runWait.Observe(wait.Seconds()) }

// RunEnded counts a run that ended in phase after d.
func (m *Metrics) RunEnded(phase apiv1.Phase, d time.Duration) {
	m.engine.runsEnded.WithLabelValues(string(phase)).Inc()
	m.engine.runDuration.WithLabelValues(string(phase)).Observe(d.Seconds())
}

// TaskEnded counts a task that ended in phase.
func (m *Metrics) TaskEnded(phase apiv1.Phase) {
	m.engine.tasksEnded.WithLabelValues(string(phase)).Inc()
}

// JobStarted counts a training job's attempt that started: a restart,
// or the first attempt of the job's try.
func (m *Metrics) JobStarted(framework string, restart bool) {
	if restart {
		m.engine.jobsRestarted.WithLabelValues(framework).Inc()
		return
	}
	m.engine.jobsCreated.WithLabelValues(framework).Inc()
}

// JobEnded counts a training job that ended in phase.
func (m *Metrics) JobEnded(framework string, phase apiv1.Phase) {
	switch phase {
	case apiv1.PhaseSucceeded:
		m.engine.jobsSucceeded.WithLabelValues(framework).Inc()
	case apiv1.PhaseFailed:
		m.engine.jobsFailed.WithLabelValues(framework).Inc()
	}
	m.engine.jobsOthers.WithLabelValues(framework, string(phase)).Inc()
}
