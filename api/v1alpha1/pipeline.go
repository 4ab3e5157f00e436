package v1alpha1

import (
	"encoding/json"
	"time"
)

// ForEach is the list a map task runs over, and how. Exactly one of
// Items, Range and From is set.
type ForEach struct {
	// Items is a literal list: strings, numbers or mappings. A task reads
	// the current one as {{item}}, a field of it as {{item.<field>}}, and
	// its place in the list as {{item.index}}.
	Items []json.RawMessage `json:"items,omitempty"`
	// Range is a sequence of integers, as Argo's withSequence.
	Range *Range `json:"range,omitempty"`
	// From is a template whose value is a JSON list: a param, or an
	// upstream task's output parameter ("{{tasks.list.outputs.parameters.files}}").
	From string `json:"from,omitempty"`
	// MaxParallel caps how many items run at once; 0 runs as many as the
	// machine admits.
	MaxParallel int `json:"maxParallel,omitempty"`
	// MinSuccesses is how many items must succeed for the task to
	// succeed; 0 means all of them (unless MinSuccessRatio is set).
	MinSuccesses int `json:"minSuccesses,omitempty"`
	// MinSuccessRatio is the fraction of items, from 0 to 1, that must
	// succeed, as Flyte's min_success_ratio.
	MinSuccessRatio *float64 `json:"minSuccessRatio,omitempty"`
}

// Range is the integers Start, Start+Step, ... up to and including End,
// or Count of them.
type Range struct {
	// Start is the first number (default 0).
	Start int `json:"start,omitempty"`
	// End is the last number; set End or Count.
	End *int `json:"end,omitempty"`
	// Count is how many numbers; set End or Count.
	Count *int `json:"count,omitempty"`
	// Step is the difference between two numbers (default 1, or -1 when
	// End is below Start).
	Step int `json:"step,omitempty"`
}

// TriggerRule says how a task's upstream tasks must have ended for it to
// start, with Airflow's and FATE's names.
type TriggerRule string

// The trigger rules. Each is checked once every upstream task has ended.
const (
	// TriggerAllSucceeded: every upstream task succeeded (the default).
	TriggerAllSucceeded TriggerRule = "allSucceeded"
	// TriggerAllDone: every upstream task ended, however.
	TriggerAllDone TriggerRule = "allDone"
	// TriggerOneSucceeded: at least one upstream task succeeded.
	TriggerOneSucceeded TriggerRule = "oneSucceeded"
	// TriggerOneFailed: at least one upstream task failed.
	TriggerOneFailed TriggerRule = "oneFailed"
	// TriggerNoneFailed: no upstream task failed (each succeeded or was skipped).
	TriggerNoneFailed TriggerRule = "noneFailed"
)

// TriggerRules lists the trigger rules.
func TriggerRules() []TriggerRule {
	return []TriggerRule{TriggerAllSucceeded, TriggerAllDone, TriggerOneSucceeded, TriggerOneFailed, TriggerNoneFailed}
}

// Dynamic says where a dynamic task's command writes its fragment.
type Dynamic struct {
	// Output names the task's output parameter that holds the fragment:
	// YAML or JSON with tasks (as a workflow's spec.tasks) and, optionally,
	// outputs (as spec.outputs), which become the task's own outputs.
	Output string `json:"output"`
	// Workflows names the workflows the fragment's tasks may run (as
	// subworkflows, or per map item): Workflows of the files or stored
	// WorkflowTemplates, checked at submit and kept with the run. A
	// fragment may also run a stored template it does not name here,
	// looked up when it runs.
	Workflows []string `json:"workflows,omitempty"`
}

// Fragment is what a dynamic task writes: tasks to run as its children,
// and the outputs it then gives.
type Fragment struct {
	// Tasks are the children, in the shape of a workflow's spec.tasks.
	Tasks []Task `json:"tasks"`
	// Outputs are the dynamic task's outputs, read from its children's.
	Outputs *WorkflowOutputs `json:"outputs,omitempty"`
}

// SubWorkflow names the workflow a task runs as its children.
type SubWorkflow struct {
	// Name is a Workflow in the files submitted with this one.
	Name string `json:"name"`
	// Params set the subworkflow's params; values may use templates.
	Params []ParamValue `json:"params,omitempty"`
}

// ParamValue sets one param.
type ParamValue struct {
	// Name of the param.
	Name string `json:"name"`
	// Value, templates expanded.
	Value string `json:"value"`
}

// Gate is what a gate task waits for: exactly one of Approve, Sleep and Signal.
type Gate struct {
	// Approve waits until someone approves or rejects the task (kiln
	// approve, the API or the UI).
	Approve *ApproveGate `json:"approve,omitempty"`
	// Sleep waits for a duration, or until a time.
	Sleep *SleepGate `json:"sleep,omitempty"`
	// Signal waits for a typed value (kiln signal), which becomes the
	// task's output parameter "value".
	Signal *SignalGate `json:"signal,omitempty"`
	// Timeout bounds the wait, as a Go duration; empty waits as long as it takes.
	Timeout string `json:"timeout,omitempty"`
	// OnTimeout is what a timeout does: fail (the default), succeed (an
	// approval approves, a signal takes its default) or skip.
	OnTimeout GateTimeoutAction `json:"onTimeout,omitempty"`
}

// Sensor waits for something outside the run; exactly one kind is set.
type Sensor struct {
	// File waits until a path exists on the engine's machine.
	File *FileSensor `json:"file,omitempty"`
	// Poll is how often it looks, as a Go duration (default 5s, at least 100ms).
	Poll string `json:"poll,omitempty"`
	// Timeout bounds the wait, as a Go duration; empty waits as long as it takes.
	Timeout string `json:"timeout,omitempty"`
	// OnTimeout is what a timeout does: fail (the default, KLN-3016) or skip.
	OnTimeout GateTimeoutAction `json:"onTimeout,omitempty"`
}

// FileSensor waits until a file or directory exists.
type FileSensor struct {
	// Path is an absolute path (templates allowed: {{params.day}}); the
	// task's output parameter "path" is it, once found.
	Path string `json:"path"`
}

// ApproveGate waits for a yes or a no.
type ApproveGate struct {
	// Message is shown to whoever decides.
	Message string `json:"message,omitempty"`
}

// SleepGate waits for a duration, or until a time: exactly one is set.
type SleepGate struct {
	// Duration is a Go duration, counted from when the gate starts waiting.
	Duration string `json:"duration,omitempty"`
	// Until is an RFC 3339 time; templates are expanded.
	Until string `json:"until,omitempty"`
}

// SignalGate waits for a value.
type SignalGate struct {
	// Type is what the value must be: string (the default), int, float,
	// bool or json.
	Type string `json:"type,omitempty"`
	// Message is shown to whoever sends the value.
	Message string `json:"message,omitempty"`
	// Default is the value a timeout with onTimeout: succeed gives.
	Default *string `json:"default,omitempty"`
}

// GateTimeoutAction is what a gate's timeout does.
type GateTimeoutAction string

// What a gate's timeout can do.
const (
	GateTimeoutFail    GateTimeoutAction = "fail"
	GateTimeoutSucceed GateTimeoutAction = "succeed"
	GateTimeoutSkip    GateTimeoutAction = "skip"
)

// WorkflowOutputs are a workflow's own outputs, read from its tasks'.
type WorkflowOutputs struct {
	// Parameters are values, usually "{{tasks.<task>.outputs.parameters.<name>}}".
	Parameters []WorkflowOutput `json:"parameters,omitempty"`
	// Artifacts are files, usually "{{tasks.<task>.outputs.artifacts.<name>}}".
	Artifacts []WorkflowOutput `json:"artifacts,omitempty"`
}

// WorkflowOutput is one output of a workflow.
type WorkflowOutput struct {
	// Name of the output.
	Name string `json:"name"`
	// Value is a template over the workflow's tasks.
	Value string `json:"value"`
}

// GateStatus is what a gate task waited for and what it got.
type GateStatus struct {
	// Kind is approve, sleep or signal.
	Kind string `json:"kind"`
	// Message is the gate's message, shown to whoever decides.
	Message string `json:"message,omitempty"`
	// Type is a signal's value type.
	Type string `json:"type,omitempty"`
	// WaitingSince is when the gate started waiting.
	WaitingSince *time.Time `json:"waitingSince,omitempty"`
	// WakeAt is when the gate next wakes by itself: its sleep's end or
	// its timeout, whichever comes first.
	WakeAt *time.Time `json:"wakeAt,omitempty"`
	// NextLook is when a node that polls (a sensor) looks again.
	NextLook *time.Time `json:"nextLook,omitempty"`
	// SleepUntil is when a sleep ends.
	SleepUntil *time.Time `json:"sleepUntil,omitempty"`
	// Decision is how the wait ended: approved, rejected, signalled,
	// slept, timedOut, or cancelled (the run stopped first).
	Decision string `json:"decision,omitempty"`
	// Value is a signal's value.
	Value string `json:"value,omitempty"`
	// By is who decided or signalled; At is when.
	By string     `json:"by,omitempty"`
	At *time.Time `json:"at,omitempty"`
	// Reason is what the decider said.
	Reason string `json:"reason,omitempty"`
}

// GateInput is a decision or a signal sent to a waiting gate.
type GateInput struct {
	// Approve is set for an approval gate: true approves, false rejects.
	Approve *bool `json:"approve,omitempty"`
	// Value is a signal's value, as text.
	Value *string `json:"value,omitempty"`
	// Reason is a note kept with the decision.
	Reason string `json:"reason,omitempty"`
	// By is who sent it; the server sets it from the token.
	By string `json:"by,omitempty"`
	// At is when it was received; the receiver sets it.
	At time.Time `json:"at"`
}

// ChildCounts counts a task's children (a map's items, a dynamic or
// subworkflow task's tasks) by phase.
type ChildCounts struct {
	Total     int `json:"total"`
	Pending   int `json:"pending,omitempty"`
	Running   int `json:"running,omitempty"`
	Succeeded int `json:"succeeded,omitempty"`
	Failed    int `json:"failed,omitempty"`
	Skipped   int `json:"skipped,omitempty"`
	Cancelled int `json:"cancelled,omitempty"`
	// SkippedByCondition counts the skipped children whose own condition
	// was false (a map's items filtered by when): they count neither for
	// nor against a map's success policy.
	SkippedByCondition int `json:"skippedByCondition,omitempty"`
}

// RunOutputs are the outputs of a finished run, from spec.outputs.
type RunOutputs struct {
	Parameters map[string]string `json:"parameters,omitempty"`
	Artifacts  map[string]string `json:"artifacts,omitempty"`
}
