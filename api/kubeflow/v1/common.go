package v1

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
// namespace is read as the kiln project the job belongs to; generateName
// stands for name when there is none (kiln's run IDs are unique anyway).
type ObjectMeta struct {
	Name         string            `json:"name,omitempty"`
	GenerateName string            `json:"generateName,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// ReplicaType names a group of replicas: Master, Worker, Chief, PS,
// Evaluator or Launcher, depending on the kind.
type ReplicaType string

// ReplicaSpec is one group of replicas: how many, their pod, and what the
// operator does when one of them ends.
type ReplicaSpec struct {
	// Replicas defaults to 1.
	Replicas *int32 `json:"replicas,omitempty"`
	// Template is the replicas' pod.
	Template PodTemplateSpec `json:"template,omitempty"`
	// RestartPolicy is Always, OnFailure, Never or ExitCode; the default
	// is the kind's (OnFailure for PyTorchJob, Never for the others).
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`
}

// PodTemplateSpec is a replica's pod: labels, annotations and the spec.
type PodTemplateSpec struct {
	// APIVersion and Kind are no fields of a pod template, but some of the
	// operator's own examples write them (apiVersion: v1, kind: Pod) and
	// its API server drops them: kiln reads and ignores them.
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Metadata   *PodMetadata   `json:"metadata,omitempty"`
	Spec       corev1.PodSpec `json:"spec,omitempty"`
}

// PodMetadata is the part of a pod's metadata a template may set.
type PodMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RestartPolicy is what happens when a replica ends.
type RestartPolicy string

// Restart policies.
const (
	RestartAlways    RestartPolicy = "Always"
	RestartOnFailure RestartPolicy = "OnFailure"
	RestartNever     RestartPolicy = "Never"
	// RestartExitCode restarts on retryable exit codes (128 and above:
	// signals) and fails on the others (1-127).
	RestartExitCode RestartPolicy = "ExitCode"
)

// CleanPodPolicy says which pods are deleted when a job ends.
type CleanPodPolicy string

// Clean-pod policies.
const (
	CleanPodAll     CleanPodPolicy = "All"
	CleanPodRunning CleanPodPolicy = "Running"
	CleanPodNone    CleanPodPolicy = "None"
)

// RunPolicy bounds a job's life: cleanup, time, restarts and scheduling.
type RunPolicy struct {
	CleanPodPolicy *CleanPodPolicy `json:"cleanPodPolicy,omitempty"`
	// TTLSecondsAfterFinished deletes the job this long after it ended.
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// ActiveDeadlineSeconds bounds the job's running time.
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
	// BackoffLimit is how often the job is retried before it fails.
	BackoffLimit     *int32            `json:"backoffLimit,omitempty"`
	SchedulingPolicy *SchedulingPolicy `json:"schedulingPolicy,omitempty"`
	// Suspend, when true, creates the job without starting it.
	Suspend *bool `json:"suspend,omitempty"`
	// ManagedBy names the controller that runs the job.
	ManagedBy *string `json:"managedBy,omitempty"`
}

// SchedulingPolicy is what a gang scheduler (Volcano, coscheduling) reads.
type SchedulingPolicy struct {
	MinAvailable           *int32              `json:"minAvailable,omitempty"`
	Queue                  string              `json:"queue,omitempty"`
	MinResources           corev1.ResourceList `json:"minResources,omitempty"`
	PriorityClass          string              `json:"priorityClass,omitempty"`
	ScheduleTimeoutSeconds *int32              `json:"scheduleTimeoutSeconds,omitempty"`
}

// ReplicaSpecs are a job's groups of replicas by type.
type ReplicaSpecs map[ReplicaType]*ReplicaSpec

// Status is the operator's to write; a document's own is dropped.
type Status = json.RawMessage
