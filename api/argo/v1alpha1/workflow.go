package v1alpha1

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// TypeMeta names a document's schema.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// ObjectMeta is the part of Kubernetes object metadata a user writes.
// generateName stands for name when there is none.
type ObjectMeta struct {
	Name         string            `json:"name,omitempty"`
	GenerateName string            `json:"generateName,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// Workflow is an Argo Workflow: a spec of templates run from its entrypoint.
type Workflow struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     WorkflowSpec `json:"spec"`
	// Status is Argo's to write; a document's own is dropped.
	Status json.RawMessage `json:"status,omitempty"`
}

// WorkflowTemplate is a stored Workflow spec that workflows call into
// (templateRef) or run whole (workflowTemplateRef). A
// ClusterWorkflowTemplate has the same shape.
type WorkflowTemplate struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     WorkflowSpec `json:"spec"`
}

// WorkflowSpec is what a workflow runs.
type WorkflowSpec struct {
	// Templates are the workflow's functions: containers, scripts, DAGs,
	// steps and suspensions.
	Templates []Template `json:"templates,omitempty"`
	// Entrypoint names the template run first.
	Entrypoint string `json:"entrypoint,omitempty"`
	// Arguments are the workflow's parameters ({{workflow.parameters.X}})
	// and the entrypoint's inputs.
	Arguments *Arguments `json:"arguments,omitempty"`
	// OnExit names a template run after the workflow, whatever its result.
	OnExit string `json:"onExit,omitempty"`
	// ActiveDeadlineSeconds bounds the whole workflow.
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// Parallelism caps how many pods run at once.
	Parallelism *int64 `json:"parallelism,omitempty"`
	// WorkflowTemplateRef runs a stored WorkflowTemplate's spec.
	WorkflowTemplateRef *WorkflowTemplateRef `json:"workflowTemplateRef,omitempty"`
	// TTLStrategy deletes the workflow after it ends.
	TTLStrategy *TTLStrategy `json:"ttlStrategy,omitempty"`
	// NodeSelector, Tolerations, Affinity and Volumes shape every pod.
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     json.RawMessage     `json:"affinity,omitempty"`
	Volumes      json.RawMessage     `json:"volumes,omitempty"`

	ServiceAccountName           json.RawMessage `json:"serviceAccountName,omitempty"`
	AutomountServiceAccountToken json.RawMessage `json:"automountServiceAccountToken,omitempty"`
	Executor                     json.RawMessage `json:"executor,omitempty"`
	VolumeClaimTemplates         json.RawMessage `json:"volumeClaimTemplates,omitempty"`
	ArtifactRepositoryRef        json.RawMessage `json:"artifactRepositoryRef,omitempty"`
	Suspend                      json.RawMessage `json:"suspend,omitempty"`
	ImagePullSecrets             json.RawMessage `json:"imagePullSecrets,omitempty"`
	HostNetwork                  json.RawMessage `json:"hostNetwork,omitempty"`
	DNSPolicy                    json.RawMessage `json:"dnsPolicy,omitempty"`
	DNSConfig                    json.RawMessage `json:"dnsConfig,omitempty"`
	Priority                     json.RawMessage `json:"priority,omitempty"`
	SchedulerName                json.RawMessage `json:"schedulerName,omitempty"`
	PodGC                        json.RawMessage `json:"podGC,omitempty"`
	PodPriorityClassName         json.RawMessage `json:"podPriorityClassName,omitempty"`
	HostAliases                  json.RawMessage `json:"hostAliases,omitempty"`
	SecurityContext              json.RawMessage `json:"securityContext,omitempty"`
	PodSpecPatch                 json.RawMessage `json:"podSpecPatch,omitempty"`
	PodDisruptionBudget          json.RawMessage `json:"podDisruptionBudget,omitempty"`
	Metrics                      json.RawMessage `json:"metrics,omitempty"`
	Shutdown                     json.RawMessage `json:"shutdown,omitempty"`
	Synchronization              json.RawMessage `json:"synchronization,omitempty"`
	VolumeClaimGC                json.RawMessage `json:"volumeClaimGC,omitempty"`
	RetryStrategy                json.RawMessage `json:"retryStrategy,omitempty"`
	PodMetadata                  json.RawMessage `json:"podMetadata,omitempty"`
	TemplateDefaults             json.RawMessage `json:"templateDefaults,omitempty"`
	ArchiveLogs                  json.RawMessage `json:"archiveLogs,omitempty"`
	Hooks                        json.RawMessage `json:"hooks,omitempty"`
	WorkflowMetadata             json.RawMessage `json:"workflowMetadata,omitempty"`
	ArtifactGC                   json.RawMessage `json:"artifactGC,omitempty"`
	ExecutorPlugins              json.RawMessage `json:"executorPlugins,omitempty"`
	PodResources                 json.RawMessage `json:"podResources,omitempty"`
	ResourceClaims               json.RawMessage `json:"resourceClaims,omitempty"`
}

// TTLStrategy says when a finished workflow is deleted.
type TTLStrategy struct {
	SecondsAfterCompletion *int32 `json:"secondsAfterCompletion,omitempty"`
	SecondsAfterSuccess    *int32 `json:"secondsAfterSuccess,omitempty"`
	SecondsAfterFailure    *int32 `json:"secondsAfterFailure,omitempty"`
}

// WorkflowTemplateRef names a stored WorkflowTemplate.
type WorkflowTemplateRef struct {
	Name         string `json:"name,omitempty"`
	ClusterScope bool   `json:"clusterScope,omitempty"`
}

// Arguments are the values a call gives a template's inputs.
type Arguments struct {
	Parameters []Parameter `json:"parameters,omitempty"`
	Artifacts  []Artifact  `json:"artifacts,omitempty"`
}
