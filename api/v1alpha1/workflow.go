package v1alpha1

// KindWorkflow is the kind of a Workflow document.
const KindWorkflow = "Workflow"

// Workflow is a DAG of tasks. Each submission of a Workflow is a Run.
type Workflow struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     WorkflowSpec `json:"spec"`
}

// WorkflowSpec is what a Workflow runs.
type WorkflowSpec struct {
	// Params are the run's inputs, read by tasks as {{params.<name>}}.
	Params []Param `json:"params,omitempty"`
	// Tasks are the nodes of the DAG. At least one is required.
	Tasks []Task `json:"tasks"`
	// Timeout bounds the whole run, as a Go duration ("2h"). Empty means no limit.
	Timeout string `json:"timeout,omitempty"`
	// FailFast, true by default, starts nothing new after the first task
	// fails, lets running tasks finish and then fails the run. When false,
	// every branch that does not depend on a failed task keeps running.
	FailFast *bool `json:"failFast,omitempty"`
	// Image is the container image of tasks that set none (kubernetes backend).
	Image string `json:"image,omitempty"`
	// PodTemplate is the base of every task's pods (kubernetes backend); a
	// task's own podTemplate replaces it.
	PodTemplate *PodTemplate `json:"podTemplate,omitempty"`
	// OnExit tasks run after every other task has ended, whatever the
	// run's result; they read {{workflow.status}} and {{workflow.failures}}.
	OnExit []Task `json:"onExit,omitempty"`
	// Outputs are the workflow's own outputs, read from its tasks': what a
	// subworkflow gives its parent task, and what a finished run shows.
	Outputs *WorkflowOutputs `json:"outputs,omitempty"`
	// TTLSecondsAfterFinished, when set, deletes the run (its records,
	// logs and outputs) this many seconds after it finished, whatever
	// its result. Unset keeps it until it is deleted or over HistoryLimit.
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// HistoryLimit keeps only the newest finished runs of the workflow's
	// name in its project; older ones are deleted.
	HistoryLimit *HistoryLimit `json:"historyLimit,omitempty"`
	// Federation makes the workflow federated: its tasks run at the
	// parties that fill the roles they list.
	Federation *Federation `json:"federation,omitempty"`
}

// Param is a named input of a workflow.
type Param struct {
	// Name is the parameter's name, referenced as {{params.<name>}}.
	Name string `json:"name"`
	// Default is used when the run does not set the parameter. A parameter
	// without a default must be given at submit time.
	Default *string `json:"default,omitempty"`
	// Description is shown by tools; kiln does not interpret it.
	Description string `json:"description,omitempty"`
}

// Task is one node of a workflow: a command run as a process, or, with
// Train, a distributed training job.
type Task struct {
	// Name is a DNS-1123 label, unique within the workflow.
	Name string `json:"name"`
	// Command is the program and its first arguments. It is run directly,
	// never through a shell; templates in it are expanded first.
	Command []string `json:"command,omitempty"`
	// Train runs the task as a TrainJob instead of a single process; its
	// command lives in it.
	Train *TrainTask `json:"train,omitempty"`
	// Args are appended to Command.
	Args []string `json:"args,omitempty"`
	// Env adds environment variables. Names starting with KILN_ are reserved.
	Env []EnvVar `json:"env,omitempty"`
	// WorkingDir is the directory the command starts in. Empty means the
	// attempt's own directory.
	WorkingDir string `json:"workingDir,omitempty"`
	// DependsOn lists tasks that must succeed before this one starts.
	DependsOn []string `json:"dependsOn,omitempty"`
	// Outputs declares the parameters and artifacts the task produces.
	Outputs *Outputs `json:"outputs,omitempty"`
	// Retries says how often and how soon a failed attempt is tried again.
	Retries *RetryStrategy `json:"retries,omitempty"`
	// Timeout bounds each attempt, as a Go duration ("30m"). Empty means no limit.
	Timeout string `json:"timeout,omitempty"`
	// Resources is what one attempt takes from the machine's pool while it
	// runs. Without it a task takes one CPU.
	Resources *Resources `json:"resources,omitempty"`
	// AdmissionTimeout bounds how long the task may wait for room in the
	// pool before it fails with KLN-2002, as a Go duration ("10m"). Empty
	// waits as long as it takes; a training job's runtime may set it with
	// gangPolicy.scheduleTimeoutSeconds.
	AdmissionTimeout string `json:"admissionTimeout,omitempty"`
	// Priority orders admission when the pool is short (default 0): while
	// a task of higher priority waits for room, no task of lower priority
	// takes any. Tasks of equal priority start first come, first served,
	// but one that fits may start ahead of one that does not.
	Priority int32 `json:"priority,omitempty"`
	// Image is the container image the task runs in on the kubernetes
	// backend (required there, here or on the workflow); ignored locally.
	Image string `json:"image,omitempty"`
	// PodTemplate shapes the task's pods on the kubernetes backend.
	PodTemplate *PodTemplate `json:"podTemplate,omitempty"`
	// ForEach makes the task a map: it runs once per item of a list, as
	// Flyte's map tasks and Argo's withItems, withParam and withSequence do.
	ForEach *ForEach `json:"forEach,omitempty"`
	// When is a CEL expression over params and upstream tasks; a task
	// whose condition is false is skipped, and so are its dependents
	// unless their trigger rule says otherwise.
	When string `json:"when,omitempty"`
	// Trigger says how the upstream tasks must have ended for this one to
	// start: allSucceeded (the default), allDone, oneSucceeded, oneFailed
	// or noneFailed. A task whose rule is not met is skipped.
	Trigger TriggerRule `json:"trigger,omitempty"`
	// Depends is an expression over upstream results, as Argo's enhanced
	// depends: "prep && (train.Failed || train.Skipped)". The tasks it
	// names are the task's dependencies; it replaces dependsOn and trigger.
	Depends string `json:"depends,omitempty"`
	// Dynamic makes the task's command write a workflow fragment, which
	// then runs as the task's children (Flyte's @dynamic).
	Dynamic *Dynamic `json:"dynamic,omitempty"`
	// Workflow runs another workflow as the task's children (a subworkflow).
	Workflow *SubWorkflow `json:"workflow,omitempty"`
	// Gate makes the task wait for an approval, a time or a signal
	// instead of running anything.
	Gate *Gate `json:"gate,omitempty"`
	// Sensor makes the task wait until something outside the run is
	// there (a file), looking again every poll, instead of running
	// anything (Airflow's FileSensor).
	Sensor *Sensor `json:"sensor,omitempty"`
	// Initialize fetches a training job's dataset or model (kiln writes it
	// for a TrainJob's spec.initializer).
	Initialize *InitializeTask `json:"initialize,omitempty"`
	// Cache reuses the task's stored result when everything that decides
	// it is unchanged (a map's items are cached one by one).
	Cache *Cache `json:"cache,omitempty"`
	// Roles makes the task federated: it runs at every party of each
	// role listed (spec.federation.roles), each party running its share.
	Roles []string `json:"roles,omitempty"`
	// PerRole changes the share of the parties of a role.
	PerRole map[string]TaskOverride `json:"perRole,omitempty"`
	// PerParty changes one party's share, after PerRole.
	PerParty map[string]TaskOverride `json:"perParty,omitempty"`
}

// EnvVar is one environment variable of a task.
type EnvVar struct {
	// Name of the variable.
	Name string `json:"name"`
	// Value, with templates expanded.
	Value string `json:"value,omitempty"`
	// ValueFrom takes the value from elsewhere instead.
	ValueFrom *EnvSource `json:"valueFrom,omitempty"`
}

// EnvSource is where a variable's value comes from.
type EnvSource struct {
	// Secret names a secret of the run's project (kiln secret set). Its
	// value reaches the process only: never the API, events or kiln's logs.
	Secret string `json:"secret"`
}

// Outputs declares what a task leaves behind for downstream tasks.
type Outputs struct {
	// Parameters are small values: the task writes the file
	// $KILN_OUTPUTS/<name>, and downstream tasks read its content as
	// {{tasks.<task>.outputs.parameters.<name>}}.
	Parameters []OutputParameter `json:"parameters,omitempty"`
	// Artifacts are files under the task's output directory; downstream
	// tasks receive their absolute path as {{tasks.<task>.outputs.artifacts.<name>}}.
	Artifacts []Artifact `json:"artifacts,omitempty"`
}

// OutputParameter is a small value a task produces.
type OutputParameter struct {
	// Name of the parameter and of the file under $KILN_OUTPUTS.
	Name string `json:"name"`
	// To lists, in a federated workflow, the roles whose parties' shares
	// may read the parameter although they run no share of its task: it
	// then leaves its party, through the party's server and only if the
	// party's policy lets it (docs/federation.md). The task must run at
	// one party, under one role.
	To []string `json:"to,omitempty"`
}

// Artifact is a file a task produces.
type Artifact struct {
	// Name of the artifact.
	Name string `json:"name"`
	// Path of the file, relative to the task's output directory ($KILN_OUTPUTS).
	Path string `json:"path"`
	// To lists, in a federated workflow, the roles whose parties' shares
	// may read the artifact (a file, on the local backend) although they
	// run no share of its task, as OutputParameter.To.
	To []string `json:"to,omitempty"`
}

// RetryStrategy says how a failed attempt is retried.
type RetryStrategy struct {
	// Limit is the number of retries after the first attempt (default 0).
	Limit int `json:"limit"`
	// Backoff is the wait before each retry. Without it retries start at once.
	Backoff *Backoff `json:"backoff,omitempty"`
}

// Backoff is an exponential wait: Duration, then Duration*Factor, and so on,
// never more than Max.
type Backoff struct {
	// Duration is the first wait, as a Go duration ("5s").
	Duration string `json:"duration"`
	// Factor multiplies the wait after each retry (default 2, at least 1).
	Factor *float64 `json:"factor,omitempty"`
	// Max caps the wait, as a Go duration. Empty means no cap.
	Max string `json:"max,omitempty"`
}

// Resources is what an attempt takes from the machine while it runs.
type Resources struct {
	// CPU in cores ("2", "500m"). Default 1.
	CPU Quantity `json:"cpu,omitempty"`
	// Memory in bytes ("512Mi", "2Gi"). Default 0.
	Memory Quantity `json:"memory,omitempty"`
	// GPU is a whole number of devices. Default 0.
	GPU Quantity `json:"gpu,omitempty"`
}

// Params returns the names of the output parameters; o may be nil.
func (o *Outputs) Params() []string {
	if o == nil {
		return nil
	}
	names := make([]string, len(o.Parameters))
	for i, p := range o.Parameters {
		names[i] = p.Name
	}
	return names
}
