package v1alpha1

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Template is one of a workflow's functions: exactly one of Container,
// Script, DAG, Steps and Suspend says what it does (the other kinds,
// Resource, HTTP, Data, ContainerSet and Plugin, kiln does not run).
type Template struct {
	Name    string   `json:"name"`
	Inputs  *Inputs  `json:"inputs,omitempty"`
	Outputs *Outputs `json:"outputs,omitempty"`

	Container *corev1.Container `json:"container,omitempty"`
	Script    *ScriptTemplate   `json:"script,omitempty"`
	DAG       *DAGTemplate      `json:"dag,omitempty"`
	// Steps are groups run one after the other; a group's steps run in parallel.
	Steps   [][]WorkflowStep `json:"steps,omitempty"`
	Suspend *SuspendTemplate `json:"suspend,omitempty"`

	// ActiveDeadlineSeconds bounds each attempt (a number, or a template).
	ActiveDeadlineSeconds *intstr.IntOrString `json:"activeDeadlineSeconds,omitempty"`
	// Timeout bounds the template, as a duration ("30s").
	Timeout       string         `json:"timeout,omitempty"`
	RetryStrategy *RetryStrategy `json:"retryStrategy,omitempty"`
	// Parallelism caps how many of the template's children run at once.
	Parallelism *int64 `json:"parallelism,omitempty"`
	// FailFast (steps) stops starting children after one fails.
	FailFast     *bool               `json:"failFast,omitempty"`
	Memoize      json.RawMessage     `json:"memoize,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Volumes      json.RawMessage     `json:"volumes,omitempty"`

	Metadata                     json.RawMessage `json:"metadata,omitempty"`
	Affinity                     json.RawMessage `json:"affinity,omitempty"`
	Daemon                       json.RawMessage `json:"daemon,omitempty"`
	ContainerSet                 json.RawMessage `json:"containerSet,omitempty"`
	Resource                     json.RawMessage `json:"resource,omitempty"`
	Data                         json.RawMessage `json:"data,omitempty"`
	HTTP                         json.RawMessage `json:"http,omitempty"`
	Plugin                       json.RawMessage `json:"plugin,omitempty"`
	InitContainers               json.RawMessage `json:"initContainers,omitempty"`
	Sidecars                     json.RawMessage `json:"sidecars,omitempty"`
	ArchiveLocation              json.RawMessage `json:"archiveLocation,omitempty"`
	SchedulerName                json.RawMessage `json:"schedulerName,omitempty"`
	PriorityClassName            json.RawMessage `json:"priorityClassName,omitempty"`
	Priority                     json.RawMessage `json:"priority,omitempty"`
	ServiceAccountName           json.RawMessage `json:"serviceAccountName,omitempty"`
	AutomountServiceAccountToken json.RawMessage `json:"automountServiceAccountToken,omitempty"`
	Executor                     json.RawMessage `json:"executor,omitempty"`
	HostAliases                  json.RawMessage `json:"hostAliases,omitempty"`
	SecurityContext              json.RawMessage `json:"securityContext,omitempty"`
	PodSpecPatch                 json.RawMessage `json:"podSpecPatch,omitempty"`
	Metrics                      json.RawMessage `json:"metrics,omitempty"`
	Synchronization              json.RawMessage `json:"synchronization,omitempty"`
	Annotations                  json.RawMessage `json:"annotations,omitempty"`
	PendingTimeout               json.RawMessage `json:"pendingTimeout,omitempty"`
	PodResources                 json.RawMessage `json:"podResources,omitempty"`
	ResourceClaims               json.RawMessage `json:"resourceClaims,omitempty"`
}

// ScriptTemplate is a container whose program is Source, run by its command.
type ScriptTemplate struct {
	corev1.Container `json:",inline"`
	// Source is the script's text.
	Source string `json:"source"`
}

// SuspendTemplate waits: for a resume, or for Duration.
type SuspendTemplate struct {
	// Duration is seconds ("20") or a duration ("2m"); empty waits for a resume.
	Duration string `json:"duration,omitempty"`
}

// DAGTemplate is tasks run when their dependencies allow.
type DAGTemplate struct {
	Tasks []DAGTask `json:"tasks"`
	// Target names the tasks to run (space separated); the others run
	// only when a target needs them.
	Target   string `json:"target,omitempty"`
	FailFast *bool  `json:"failFast,omitempty"`
}

// Call is what a DAG task and a step share: the template called, with what
// arguments, how often and when.
type Call struct {
	Name         string            `json:"name"`
	Template     string            `json:"template,omitempty"`
	TemplateRef  *TemplateRef      `json:"templateRef,omitempty"`
	Arguments    *Arguments        `json:"arguments,omitempty"`
	WithItems    []json.RawMessage `json:"withItems,omitempty"`
	WithParam    string            `json:"withParam,omitempty"`
	WithSequence *Sequence         `json:"withSequence,omitempty"`
	When         string            `json:"when,omitempty"`
	ContinueOn   *ContinueOn       `json:"continueOn,omitempty"`
	// OnExit names a template run after this one, whatever its result.
	OnExit string          `json:"onExit,omitempty"`
	Inline json.RawMessage `json:"inline,omitempty"`
	Hooks  json.RawMessage `json:"hooks,omitempty"`
}

// DAGTask is one task of a DAG.
type DAGTask struct {
	Call `json:",inline"`
	// Dependencies are tasks that must succeed first.
	Dependencies []string `json:"dependencies,omitempty"`
	// Depends is an expression over upstream results ("a && b.Failed").
	Depends string `json:"depends,omitempty"`
}

// WorkflowStep is one step of a steps template's group.
type WorkflowStep struct {
	Call `json:",inline"`
}

// TemplateRef names a template of a WorkflowTemplate.
type TemplateRef struct {
	Name         string `json:"name,omitempty"`
	Template     string `json:"template,omitempty"`
	ClusterScope bool   `json:"clusterScope,omitempty"`
}

// Sequence is the numbers a call loops over: Count of them from Start, or
// Start to End inclusive, each formatted by Format (printf).
type Sequence struct {
	Count  *intstr.IntOrString `json:"count,omitempty"`
	Start  *intstr.IntOrString `json:"start,omitempty"`
	End    *intstr.IntOrString `json:"end,omitempty"`
	Format string              `json:"format,omitempty"`
}

// ContinueOn lets the workflow go on after a call fails or errors.
type ContinueOn struct {
	Error  bool `json:"error,omitempty"`
	Failed bool `json:"failed,omitempty"`
}

// RetryStrategy says how often and how soon a failed template is retried.
type RetryStrategy struct {
	Limit       *intstr.IntOrString `json:"limit,omitempty"`
	RetryPolicy string              `json:"retryPolicy,omitempty"`
	Backoff     *Backoff            `json:"backoff,omitempty"`
	Affinity    json.RawMessage     `json:"affinity,omitempty"`
	Expression  string              `json:"expression,omitempty"`
}

// Backoff is the wait before each retry: Duration, times Factor after
// each, at most MaxDuration.
type Backoff struct {
	Duration    *intstr.IntOrString `json:"duration,omitempty"`
	Factor      *intstr.IntOrString `json:"factor,omitempty"`
	MaxDuration string              `json:"maxDuration,omitempty"`
	Cap         json.RawMessage     `json:"cap,omitempty"`
}

// Inputs are a template's parameters and artifacts.
type Inputs struct {
	Parameters []Parameter `json:"parameters,omitempty"`
	Artifacts  []Artifact  `json:"artifacts,omitempty"`
}

// Outputs are what a template leaves: parameters, artifacts, and (read
// by others) its result and exit code.
type Outputs struct {
	Parameters []Parameter     `json:"parameters,omitempty"`
	Artifacts  []Artifact      `json:"artifacts,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	ExitCode   json.RawMessage `json:"exitCode,omitempty"`
}

// Parameter is a named value. Value and Default are strings, numbers or
// booleans (Argo reads each as its text).
type Parameter struct {
	Name        string          `json:"name"`
	Value       json.RawMessage `json:"value,omitempty"`
	Default     json.RawMessage `json:"default,omitempty"`
	ValueFrom   *ValueFrom      `json:"valueFrom,omitempty"`
	GlobalName  string          `json:"globalName,omitempty"`
	Enum        json.RawMessage `json:"enum,omitempty"`
	Description string          `json:"description,omitempty"`
}

// ValueFrom is where an output parameter's value comes from.
type ValueFrom struct {
	// Path is a file the template writes.
	Path string `json:"path,omitempty"`
	// Parameter is a DAG's or steps' child's output ("{{tasks.a.outputs.parameters.b}}").
	Parameter string `json:"parameter,omitempty"`
	// Default is the value when Path is not written.
	Default         json.RawMessage `json:"default,omitempty"`
	Expression      string          `json:"expression,omitempty"`
	JSONPath        string          `json:"jsonPath,omitempty"`
	JQFilter        string          `json:"jqFilter,omitempty"`
	Event           string          `json:"event,omitempty"`
	Supplied        json.RawMessage `json:"supplied,omitempty"`
	ConfigMapKeyRef json.RawMessage `json:"configMapKeyRef,omitempty"`
}

// Artifact is a named file or directory: where a template reads or writes
// it (Path), and where it comes from (From, Raw) or is kept (S3, ...).
type Artifact struct {
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
	// From is another node's output ("{{steps.gen.outputs.artifacts.out}}").
	From           string          `json:"from,omitempty"`
	Raw            *RawArtifact    `json:"raw,omitempty"`
	Optional       bool            `json:"optional,omitempty"`
	Mode           json.RawMessage `json:"mode,omitempty"`
	GlobalName     string          `json:"globalName,omitempty"`
	Archive        json.RawMessage `json:"archive,omitempty"`
	SubPath        json.RawMessage `json:"subPath,omitempty"`
	RecurseMode    json.RawMessage `json:"recurseMode,omitempty"`
	FromExpression json.RawMessage `json:"fromExpression,omitempty"`
	ArtifactGC     json.RawMessage `json:"artifactGC,omitempty"`
	Deleted        json.RawMessage `json:"deleted,omitempty"`
	ArchiveLogs    json.RawMessage `json:"archiveLogs,omitempty"`
	S3             json.RawMessage `json:"s3,omitempty"`
	Git            json.RawMessage `json:"git,omitempty"`
	HTTP           json.RawMessage `json:"http,omitempty"`
	Artifactory    json.RawMessage `json:"artifactory,omitempty"`
	HDFS           json.RawMessage `json:"hdfs,omitempty"`
	OSS            json.RawMessage `json:"oss,omitempty"`
	GCS            json.RawMessage `json:"gcs,omitempty"`
	Azure          json.RawMessage `json:"azure,omitempty"`
	Plugin         json.RawMessage `json:"plugin,omitempty"`
}

// RawArtifact is an artifact's content, written in the document.
type RawArtifact struct {
	Data string `json:"data"`
}
