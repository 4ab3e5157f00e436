package v1alpha1

import "time"

// RunProgress counts a run's tasks by how far they got. What counts is a
// node that does work: a task that runs attempts of its own (a command, a
// training job) or waits (a gate), children of map, dynamic and
// subworkflow tasks included. A task that runs children counts as one
// task until it expands (its children are not known yet), then through
// its children only: the total grows as maps expand. The engine keeps
// the counts with the run's status, so listing runs reads no nodes.
type RunProgress struct {
	// Total is the number of tasks known so far.
	Total int `json:"total"`
	// Done counts the tasks in a final phase: Succeeded, Failed, Skipped
	// or Cancelled.
	Done      int `json:"done"`
	Succeeded int `json:"succeeded,omitempty"`
	Failed    int `json:"failed,omitempty"`
	Skipped   int `json:"skipped,omitempty"`
	Cancelled int `json:"cancelled,omitempty"`
	// Running counts the tasks running now (gates waiting included).
	Running int `json:"running,omitempty"`
}

// Add counts n more tasks (or fewer, for a negative n) in phase p.
func (p *RunProgress) Add(phase Phase, n int) {
	p.Total += n
	if phase.Done() {
		p.Done += n
	}
	switch phase {
	case PhaseSucceeded:
		p.Succeeded += n
	case PhaseFailed:
		p.Failed += n
	case PhaseSkipped:
		p.Skipped += n
	case PhaseCancelled:
		p.Cancelled += n
	case PhaseRunning:
		p.Running += n
	}
}

// Move counts a task that went from phase was to phase now.
func (p *RunProgress) Move(was, now Phase) {
	if was == now {
		return
	}
	p.Add(was, -1)
	p.Add(now, 1)
}

// TrainerStatus is what a training job's own processes report of their
// progress, in the shape of Kubeflow Trainer's TrainJob
// status.trainerStatus (KEP-2779): rank 0 writes it to the file named by
// $KILN_PROGRESS and the engine reads it while the job runs.
type TrainerStatus struct {
	// ProgressPercentage is how complete the job is, 0 to 100; nil if unknown.
	ProgressPercentage *int32 `json:"progressPercentage,omitempty"`
	// EstimatedRemainingSeconds is how long the job expects to go on; nil if unknown.
	EstimatedRemainingSeconds *int32 `json:"estimatedRemainingSeconds,omitempty"`
	// Metrics are the job's current metrics ("loss", "eval_accuracy"), values as text.
	Metrics []Metric `json:"metrics,omitempty"`
	// LastUpdatedTime is when kiln read this report.
	LastUpdatedTime time.Time `json:"lastUpdatedTime"`
}

// Metric is one named value a training job reports.
type Metric struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}
