package v1alpha1

import (
	"encoding/json"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TrainingRuntime is Trainer's runtime: per namespace (kiln: per project)
// as TrainingRuntime, for all as ClusterTrainingRuntime. Both have this shape.
type TrainingRuntime struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta          `json:"metadata"`
	Spec     TrainingRuntimeSpec `json:"spec"`
}

// TrainingRuntimeSpec is a runtime's policies and its JobSet template.
type TrainingRuntimeSpec struct {
	MLPolicy       *MLPolicy          `json:"mlPolicy,omitempty"`
	PodGroupPolicy *PodGroupPolicy    `json:"podGroupPolicy,omitempty"`
	Template       JobSetTemplateSpec `json:"template"`
}

// MLPolicy is the framework and the default number of nodes. No
// framework source: the nodes run with no framework environment.
type MLPolicy struct {
	NumNodes *int32               `json:"numNodes,omitempty"`
	Torch    *TorchMLPolicySource `json:"torch,omitempty"`
	MPI      *MPIMLPolicySource   `json:"mpi,omitempty"`
	JAX      *struct{}            `json:"jax,omitempty"`
	XGBoost  *struct{}            `json:"xgboost,omitempty"`
	Flux     *json.RawMessage     `json:"flux,omitempty"`
}

// TorchMLPolicySource is PyTorch's policy.
type TorchMLPolicySource struct {
	NumProcPerNode *intstr.IntOrString `json:"numProcPerNode,omitempty"`
	ElasticPolicy  *TorchElasticPolicy `json:"elasticPolicy,omitempty"`
}

// TorchElasticPolicy is v2.1's elastic PyTorch: torchrun --nnodes=min:max.
type TorchElasticPolicy struct {
	MaxRestarts *int32          `json:"maxRestarts,omitempty"`
	MinNodes    *int32          `json:"minNodes,omitempty"`
	MaxNodes    *int32          `json:"maxNodes,omitempty"`
	Metrics     json.RawMessage `json:"metrics,omitempty"`
}

// MPIMLPolicySource is MPI's policy.
type MPIMLPolicySource struct {
	NumProcPerNode    *int32  `json:"numProcPerNode,omitempty"`
	MPIImplementation *string `json:"mpiImplementation,omitempty"`
	SSHAuthMountPath  *string `json:"sshAuthMountPath,omitempty"`
	RunLauncherAsNode *bool   `json:"runLauncherAsNode,omitempty"`
}

// PodGroupPolicy is how the gang is scheduled.
type PodGroupPolicy struct {
	Coscheduling *Coscheduling   `json:"coscheduling,omitempty"`
	Volcano      json.RawMessage `json:"volcano,omitempty"`
}

// Coscheduling is scheduler-plugins' gang policy.
type Coscheduling struct {
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// JobSetTemplateSpec is the JobSet a runtime makes of a TrainJob.
type JobSetTemplateSpec struct {
	Metadata *PodMetadata `json:"metadata,omitempty"`
	Spec     JobSetSpec   `json:"spec"`
}

// JobSetSpec holds the replicated jobs kiln realises; JobSet's other
// fields are read and judged by what kiln's own gang rules already do.
type JobSetSpec struct {
	ReplicatedJobs          []ReplicatedJob `json:"replicatedJobs,omitempty"`
	Network                 json.RawMessage `json:"network,omitempty"`
	SuccessPolicy           json.RawMessage `json:"successPolicy,omitempty"`
	FailurePolicy           json.RawMessage `json:"failurePolicy,omitempty"`
	StartupPolicy           json.RawMessage `json:"startupPolicy,omitempty"`
	Coordinator             json.RawMessage `json:"coordinator,omitempty"`
	Suspend                 *bool           `json:"suspend,omitempty"`
	TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
}

// ReplicatedJob is one job of the JobSet, run Replicas times.
type ReplicatedJob struct {
	Name      string                  `json:"name"`
	GroupName string                  `json:"groupName,omitempty"`
	Replicas  *int32                  `json:"replicas,omitempty"`
	DependsOn json.RawMessage         `json:"dependsOn,omitempty"`
	Template  batchv1.JobTemplateSpec `json:"template"`
}
