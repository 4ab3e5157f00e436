package v1alpha1

import "time"

// KindClusterTrainingRuntime is the kind of a runtime stored for every
// project, as Kubeflow Trainer's ClusterTrainingRuntime is for every
// namespace. Its spec is a TrainingRuntime's; the built-in runtimes are
// ClusterTrainingRuntimes that ship with kiln.
const KindClusterTrainingRuntime = "ClusterTrainingRuntime"

// The API groups a runtimeRef may name: kiln's own, and Kubeflow
// Trainer's, whose runtimes kiln keeps under the same names. An empty
// apiGroup is either.
const (
	GroupKiln    = "kiln.dev"
	GroupTrainer = "trainer.kubeflow.org"
)

// RuntimeSource says where a runtime a job used, or one kiln get runtimes
// lists, comes from.
type RuntimeSource string

// The sources of a runtime.
const (
	// RuntimeSourceBuiltin is a runtime that ships with kiln.
	RuntimeSourceBuiltin RuntimeSource = "builtin"
	// RuntimeSourceFiles is a TrainingRuntime of the files submitted with the job.
	RuntimeSourceFiles RuntimeSource = "files"
	// RuntimeSourceStored is a runtime stored with kiln apply.
	RuntimeSourceStored RuntimeSource = "stored"
	// RuntimeSourceOverridden marks, in a listing, a runtime that a job
	// naming it does not get: one earlier in the lookup order (the
	// project's TrainingRuntime, then a stored ClusterTrainingRuntime,
	// then the built-in one) has the same name.
	RuntimeSourceOverridden RuntimeSource = "overridden"
)

// ResolvedRuntimeRef is the runtime a train task resolved to when its run
// was submitted: which one, and which version. kiln sets it beside the
// task's resolvedRuntime spec; changing or deleting the runtime later
// changes neither.
type ResolvedRuntimeRef struct {
	// Kind is TrainingRuntime or ClusterTrainingRuntime (built-in ones).
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Project holds a stored TrainingRuntime; empty for the other kinds.
	Project string `json:"project,omitempty"`
	// Version is a stored runtime's version, counted from 1 per kind,
	// project and name; 0 for built-in runtimes and those of the files.
	Version int64 `json:"version,omitempty"`
	// Source is builtin, files or stored.
	Source RuntimeSource `json:"source"`
}

// RuntimeStatus is where a runtime kiln lists or stores comes from. kiln
// sets it; applying a document ignores it, so what kiln get prints can be
// applied again.
type RuntimeStatus struct {
	// Project holds a stored TrainingRuntime; empty for ClusterTrainingRuntimes.
	Project string `json:"project,omitempty"`
	// Version counts the changes of a stored runtime's spec, from 1;
	// applying an identical one keeps it. 0 for built-in runtimes.
	Version int64 `json:"version,omitempty"`
	// Source is builtin, stored or overridden (in listings), or files.
	Source RuntimeSource `json:"source,omitempty"`
	// CreatedAt is when the runtime was first applied (since it was last
	// deleted); UpdatedAt when its current version was.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// ApplyAction is what kiln apply did with one object, in kubectl's words.
type ApplyAction string

// The actions of kiln apply.
const (
	ApplyCreated    ApplyAction = "created"
	ApplyConfigured ApplyAction = "configured"
	ApplyUnchanged  ApplyAction = "unchanged"
	// ApplyReplaced is a WorkflowTemplate stored over one of its name.
	ApplyReplaced ApplyAction = "replaced"
	// ApplySubmitted is a Workflow or TrainJob of the files, submitted as
	// a run once everything the files store was stored.
	ApplySubmitted ApplyAction = "submitted"
)

// Applied is one object kiln apply stored.
type Applied struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Project holds it; empty for a ClusterTrainingRuntime.
	Project string `json:"project,omitempty"`
	// Version is a runtime's version after the apply.
	Version int64       `json:"version,omitempty"`
	Action  ApplyAction `json:"action"`
	// Run is the ID of the run a submitted Workflow or TrainJob became.
	Run RunID `json:"run,omitempty"`
}

// ApplyResult is what kiln apply stored, object by object: the runtimes
// first, then the templates, then the schedules, each in the order of the
// files; last the runs it submitted, of the files' Workflows and TrainJobs.
type ApplyResult struct {
	Items []Applied `json:"items"`
}

// RuntimeQuery names a stored or built-in runtime, to get or delete.
type RuntimeQuery struct {
	// Project holds the TrainingRuntime; default "default".
	Project string `json:"project,omitempty"`
	// Kind is TrainingRuntime or ClusterTrainingRuntime. Getting, empty
	// looks in lookup order; deleting, empty is TrainingRuntime.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name"`
	// Version asks for one version of a stored runtime (0: the current one).
	Version int64 `json:"version,omitempty"`
}
