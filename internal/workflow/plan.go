package workflow

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/dag"
	"kiln.dev/kiln/internal/expr"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/training"
)

// DefaultRequest is what a task without resources takes: one CPU.
var defaultRequest = resource.Request{MilliCPU: 1000}

// Plan is a valid workflow compiled for the engine. It is immutable once
// built and safe to share between goroutines.
type Plan struct {
	// Workflow is the source, as submitted.
	Workflow *apiv1.Workflow
	// Tasks are in the workflow's order; their index is their node number in Graph.
	Tasks []Task
	// Index maps a task name to its position in Tasks.
	Index map[string]int
	// Graph holds the dependencies between tasks.
	Graph *dag.Graph
	// Timeout bounds the run; 0 means none. TimeoutName is what its
	// users call it: "timeout", or for a job written as Kubeflow's,
	// "runPolicy.activeDeadlineSeconds".
	Timeout     time.Duration
	TimeoutName string
	// FailFast is spec.failFast with its default (true) applied.
	FailFast bool
	// Suspend creates the run with its training jobs suspended (a
	// TrainJob's spec.suspend).
	Suspend bool
	// MinRequest is the smallest request of any task, resource by
	// resource: when not even it fits, no task of the plan can start.
	MinRequest resource.Request
	// Outputs are spec.outputs: the workflow's own outputs.
	Outputs *apiv1.WorkflowOutputs
	// File and Object say where the plan was read from, as the submitter
	// named it, for errors found after compiling (see CheckFits).
	File, Object string
	// Rename names a field of the plan's document as the user wrote it,
	// for a document translated from another API group (nil: as it is).
	Rename func(field string) string
}

// fieldAsWritten is field as the plan's document names it.
func (p *Plan) fieldAsWritten(field string) string {
	if p.Rename == nil {
		return field
	}
	return p.Rename(field)
}

// Task is one compiled task.
type Task struct {
	// Spec is the task as written.
	Spec *apiv1.Task
	// Kind says which node handler runs the task.
	Kind apiv1.NodeKind
	// Timeout bounds each attempt; 0 means none.
	Timeout time.Duration
	// Retry is the task's retry policy.
	Retry Retry
	// Request is what one attempt takes from the pool: for a training
	// job, every node of the gang at once.
	Request resource.Request
	// PerHost is what each host of an attempt takes (a pod's requests):
	// the whole Request for a task, one node's share for a training job.
	PerHost resource.Request
	// MinHosts and MaxHosts, when MaxHosts is above 0, make the gang
	// flexible (an elastic training job): admission gives it as many
	// hosts of PerHost as fit, from MinHosts to MaxHosts, all at once.
	// Request is then MaxHosts hosts' worth.
	MinHosts, MaxHosts int
	// AdmissionTimeout bounds how long the task waits for room before it
	// fails; 0 waits as long as it takes.
	AdmissionTimeout time.Duration
	// Train is the merged training job of a train task, nil for a command.
	Train *training.Job
	// Image is the container image that applies: trainer, task, workflow
	// or runtime template, in that order. Empty on local-only workflows.
	Image string
	// ImageField is where a user sets Image, for errors.
	ImageField string
	// PodTemplate is the task's, else the workflow's.
	PodTemplate *apiv1.PodTemplate
	// Trigger is the task's trigger rule (allSucceeded by default).
	Trigger apiv1.TriggerRule
	// Depends replaces the trigger rule when set: Argo's enhanced depends.
	Depends *expr.Depends
	// When is the task's condition, nil if it has none.
	When *expr.Condition
	// Map is a map task's forEach, nil for other kinds.
	Map *Map
	// Sub is the workflow a subworkflow task runs (or, for the exit
	// node, the onExit tasks), nil for other kinds.
	Sub *Sub
	// Declared are the workflows a dynamic task's fragment may run
	// (dynamic.workflows), compiled.
	Declared []*Sub
	// Gate is a gate task's wait, nil for other kinds.
	Gate *Gate
	// Sensor is a sensor task's wait, nil for other kinds.
	Sensor *Sensor
	// Cache makes the task's results reusable; nil if it sets no cache.
	Cache *Cache
	// Federated is a federated task's shares, nil for other kinds. A
	// federated task takes no room on the initiator: its Request is zero.
	Federated *FederatedTask
}

// Cache is a task's cache policy.
type Cache struct {
	// Version is part of the key.
	Version string
	// MaxAge is how old a reused result may be; 0 means any age.
	MaxAge time.Duration
}

// Retry is a compiled retry policy.
type Retry struct {
	// Limit is the number of retries after the first attempt.
	Limit int
	// Backoff is the first wait; 0 retries at once.
	Backoff time.Duration
	// Factor multiplies the wait after each retry.
	Factor float64
	// Max caps the wait; 0 means no cap.
	Max time.Duration
}

// Delay returns the wait before attempt number next (2 for the first
// retry). It is never more than Max, nor than maxDuration when there is
// no Max: a large factor cannot overflow it.
func (r Retry) Delay(next int) time.Duration {
	most := r.Max
	if most <= 0 {
		most = maxDuration
	}
	d := float64(r.Backoff)
	for i := 2; i < next && d < float64(most); i++ {
		d *= r.Factor
	}
	if d >= float64(most) {
		return most
	}
	return time.Duration(d)
}

// Least is the least a task's attempt may start with: MinHosts hosts of a
// flexible gang, else its whole Request.
func (t *Task) Least() resource.Request {
	if t.MaxHosts <= 0 {
		return t.Request
	}
	n := int64(t.MinHosts)
	return resource.Request{MilliCPU: t.PerHost.MilliCPU * n, Memory: t.PerHost.Memory * n, GPU: t.PerHost.GPU * n}
}
