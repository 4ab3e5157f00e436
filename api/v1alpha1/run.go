package v1alpha1

import (
	"encoding/json"
	"time"
)

// RunID identifies a run: the workflow's name and a random suffix.
type RunID string

// Run is one submission of a Workflow and everything kiln knows about it.
type Run struct {
	// ID is unique in the store.
	ID RunID `json:"id"`
	// Name is the name of the submitted workflow.
	Name string `json:"name"`
	// Kind is the kind of the submitted resource ("Workflow").
	Kind string `json:"kind"`
	// Labels are copied from the resource's metadata.
	Labels map[string]string `json:"labels,omitempty"`
	// Workflow is the resource as submitted.
	Workflow *Workflow `json:"workflow,omitempty"`
	// Subworkflows are the workflows its tasks run as subworkflows, as
	// submitted with it.
	Subworkflows []*Workflow `json:"subworkflows,omitempty"`
	// Params are the values of every parameter, defaults filled in.
	Params map[string]string `json:"params,omitempty"`
	// Source is the file the resource was read from, if any, as the
	// submitter named it.
	Source string `json:"source,omitempty"`
	// WorkDir is the directory tasks start in when they set no workingDir
	// (and relative workingDirs are relative to): the directory of the
	// workflow's file, when the engine can see it. Empty: each attempt
	// starts in its own directory.
	WorkDir string `json:"workDir,omitempty"`
	// Project owns the run; API tokens are scoped to projects. Default "default".
	Project string `json:"project,omitempty"`
	// CreatedAt is when the run was submitted.
	CreatedAt time.Time `json:"createdAt"`
	// Suspend asks that the run's training jobs be stopped and not started
	// until it is cleared.
	Suspend bool `json:"suspend,omitempty"`
	// Cache is how the run uses the cache; empty means on.
	Cache CacheMode `json:"cache,omitempty"`
	// RerunOf is the run this one reruns (kiln rerun), if any.
	RerunOf *RerunOf `json:"rerunOf,omitempty"`
	// Federation is set on a federated run and on a party's part of one.
	Federation *FederationInfo `json:"federation,omitempty"`
	// Status is what happened so far.
	Status RunStatus `json:"status"`
}

// RunStatus is the observed state of a run.
type RunStatus struct {
	// Phase of the run.
	Phase Phase `json:"phase"`
	// Code is the error code of a run that did not succeed.
	Code Code `json:"code,omitempty"`
	// Message says why the run is in its phase.
	Message string `json:"message,omitempty"`
	// StartedAt is when the first task started.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// FinishedAt is when the run reached a final phase.
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// Nodes are the run's tasks, in the workflow's order, then the
	// children of map, dynamic and subworkflow tasks as they were made.
	Nodes []NodeStatus `json:"nodes,omitempty"`
	// Outputs are the workflow's outputs (spec.outputs), once it succeeded.
	Outputs *RunOutputs `json:"outputs,omitempty"`
	// Progress counts the run's tasks by phase; nil for a run stored
	// before kiln kept it.
	Progress *RunProgress `json:"progress,omitempty"`
	// Suspended is the time the run spent suspended, which its timeout
	// (a TrainJob's activeDeadlineSeconds) does not count; nil if it never
	// was.
	Suspended *SuspendedTime `json:"suspended,omitempty"`
}

// SuspendedTime is the time a run spent suspended.
type SuspendedTime struct {
	// Since is when the current suspension began; nil while the run is
	// not suspended.
	Since *time.Time `json:"since,omitempty"`
	// Seconds is the time spent suspended before Since, in all.
	Seconds float64 `json:"seconds,omitempty"`
}

// Spent is the time s counts as suspended at now.
func (s *SuspendedTime) Spent(now time.Time) time.Duration {
	if s == nil {
		return 0
	}
	d := time.Duration(s.Seconds * float64(time.Second))
	if s.Since != nil && now.After(*s.Since) {
		d += now.Sub(*s.Since)
	}
	return d
}

// NodeStatus is the observed state of one task of a run.
type NodeStatus struct {
	// Name of the task.
	Name string `json:"name"`
	// Phase of the task.
	Phase Phase `json:"phase"`
	// Code is the error code of a task that did not succeed.
	Code Code `json:"code,omitempty"`
	// Message says why the task is in its phase.
	Message string `json:"message,omitempty"`
	// StartedAt is when the first attempt started.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// FinishedAt is when the task reached a final phase.
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// RetryAt is when a Retrying task starts its next attempt.
	RetryAt *time.Time `json:"retryAt,omitempty"`
	// AttemptBase counts the attempts of earlier tries of a run that was
	// retried after failure; they do not count against the task's retries.
	AttemptBase int `json:"attemptBase,omitempty"`
	// Outputs are the output parameters the task wrote.
	Outputs map[string]string `json:"outputs,omitempty"`
	// Inputs are what the {{...}} references of the task's last attempt
	// (of a gate's message, of what a map, dynamic task or subworkflow
	// expanded from) resolved to, by reference: its parameters
	// ("params.lr"), map item ("item", "item.index"), upstream outputs
	// ("tasks.prep.outputs.parameters.n"; an artifact's path) and the
	// workflow's status. References to the run's and attempt's own names
	// and directories are left out.
	Inputs map[string]string `json:"inputs,omitempty"`
	// Attempts are the task's attempts, first to last.
	Attempts []AttemptStatus `json:"attempts,omitempty"`
	// Conditions of a training job, in the Kubeflow Trainer way, one per type.
	Conditions []Condition `json:"conditions,omitempty"`
	// Replicas counts a training job's processes per replica group.
	Replicas []ReplicaGroupStatus `json:"replicas,omitempty"`
	// Kind is the kind of node: command, train, map, dynamic, subworkflow or gate.
	Kind NodeKind `json:"kind,omitempty"`
	// Parent is the task whose child this node is (a map's item, a task
	// of a dynamic fragment or of a subworkflow); empty at the top.
	Parent string `json:"parent,omitempty"`
	// Children counts the children of a map, dynamic or subworkflow task.
	Children *ChildCounts `json:"children,omitempty"`
	// Expansion records what the task expanded into (a map's items, a
	// dynamic task's fragment, a subworkflow's params), as JSON, so that
	// its children are the same after a restart.
	Expansion json.RawMessage `json:"expansion,omitempty"`
	// Gate is what a gate task waits for and what it got.
	Gate *GateStatus `json:"gate,omitempty"`
	// Cache is what the cache did for a task that sets cache.
	Cache *CacheStatus `json:"cache,omitempty"`
	// Reused is set on a task a rerun did not run again: it is Succeeded
	// with the outputs of the run it names, and has no attempts here.
	Reused *Reused `json:"reused,omitempty"`
	// TrainerStatus is the progress a training job's processes last
	// reported (see TrainerStatus); nil if they reported none.
	TrainerStatus *TrainerStatus `json:"trainerStatus,omitempty"`
	// Parties are the shares of a federated task, one per party and
	// role, as the initiator last saw them.
	Parties []PartyShare `json:"parties,omitempty"`
	// Artifacts are the task's output artifacts as stored in the artifact
	// repository (an S3 bucket, when configured) when it succeeded: name,
	// path, digest and size, and a directory's files. Empty when no
	// repository is configured: they are then only in its output directory.
	Artifacts []CachedArtifact `json:"artifacts,omitempty"`
}

// Condition types of a training job.
const (
	ConditionCreated    = "Created"
	ConditionQueued     = "Queued"
	ConditionRunning    = "Running"
	ConditionRestarting = "Restarting"
	ConditionSuspended  = "Suspended"
	ConditionComplete   = "Complete"
	ConditionFailed     = "Failed"
)

// Condition is one aspect of a job's state, upserted by Type.
type Condition struct {
	Type string `json:"type"`
	// Status is "True" or "False".
	Status             string    `json:"status"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// ReplicaGroupStatus counts the processes of one replica group ("node",
// "launcher", "chief", "worker", "ps") of the current attempt.
type ReplicaGroupStatus struct {
	Name string `json:"name"`
	// Active processes run now.
	Active int `json:"active"`
	// Pending processes were launched but wait for the cluster to place
	// them (their pods are not bound to a node yet): they do not run.
	Pending int `json:"pending,omitempty"`
	// Succeeded and Failed processes ended on their own, with exit
	// status 0 or not.
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	// Stopped processes were stopped by kiln: on a cancel or a suspend, at
	// a timeout, or as the rest of a gang after one of it failed.
	Stopped int `json:"stopped"`
}

// AttemptStatus is one try at running a task.
type AttemptStatus struct {
	// Number counts attempts from 1.
	Number int `json:"number"`
	// ID is deterministic: <run>/<task>/<number>.
	ID string `json:"id"`
	// Phase of the attempt: Running, Succeeded, Failed or Cancelled.
	Phase Phase `json:"phase"`
	// ExitCode of the process, when it exited; absent when it never
	// started or a signal ended it.
	ExitCode *int `json:"exitCode,omitempty"`
	// Signal names the signal that ended the process, if one did.
	Signal string `json:"signal,omitempty"`
	// Code is the error code of an attempt that did not succeed.
	Code Code `json:"code,omitempty"`
	// Message says why the attempt ended as it did.
	Message string `json:"message,omitempty"`
	// System is set on an attempt that failed because of the machine (its
	// supervisor died, its pod was evicted), not the task: it counts
	// against the engine's system budget, never the task's retries.
	System bool `json:"system,omitempty"`
	// StartedAt is when the attempt was launched.
	StartedAt *time.Time `json:"startedAt,omitempty"`
	// Nodes is how many nodes admission gave the attempt of an elastic
	// training job, from its minNodes to its maxNodes; absent otherwise.
	Nodes int `json:"nodes,omitempty"`
	// Joined counts the nodes that joined the running attempt later, as
	// room came back, up to maxNodes.
	Joined int `json:"joined,omitempty"`
	// Dropped names the processes (an elastic training job's nodes) that
	// failed without taking the attempt down, in the order they ended:
	// the job went on without them.
	Dropped []string `json:"dropped,omitempty"`
	// FinishedAt is when the attempt's process exited.
	FinishedAt *time.Time `json:"finishedAt,omitempty"`
	// LogsLost counts, per log ("stdout", "stderr", "<process>.stdout" of
	// a gang), the bytes its processes wrote that the log could not hold
	// (the disk was full): its served log says where with a marker
	// "[kiln: N bytes lost: disk full]" (KLN-6011). Absent when every
	// byte was kept; it never changes the attempt's phase.
	LogsLost map[string]int64 `json:"logsLost,omitempty"`
}

// Event is one transition in a run's life, kept in order.
type Event struct {
	// Seq orders events across the store; it only grows.
	Seq int64 `json:"seq"`
	// Run the event belongs to.
	Run RunID `json:"run"`
	// Node is the task, empty for run-level events.
	Node string `json:"node,omitempty"`
	// Attempt is the attempt number, 0 when not about an attempt.
	Attempt int `json:"attempt,omitempty"`
	// Phase entered.
	Phase Phase `json:"phase"`
	// Reason is a short CamelCase word ("Started", "Exited", "BackoffElapsed").
	Reason string `json:"reason"`
	// Code is set on failures.
	Code Code `json:"code,omitempty"`
	// Message is for people.
	Message string `json:"message,omitempty"`
	// Time of the transition.
	Time time.Time `json:"time"`
}

// Node returns the node of the run named name, or nil.
func (s *RunStatus) Node(name string) *NodeStatus {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}
