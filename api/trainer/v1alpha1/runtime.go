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
	Flux     *FluxMLPolicySource  `json:"flux,omitempty"`
}

// FluxMLPolicySource is v2.3's Flux framework, which kiln does not run.
type FluxMLPolicySource struct {
	NumProcPerNode *int32 `json:"numProcPerNode,omitempty"`
}

// TorchMLPolicySource is PyTorch's policy. numProcPerNode and
// elasticPolicy are v2.1's (v2.2 and v2.3 dropped them; older documents
// still have them); envInjection is v2.3's.
type TorchMLPolicySource struct {
	NumProcPerNode *intstr.IntOrString `json:"numProcPerNode,omitempty"`
	ElasticPolicy  *TorchElasticPolicy `json:"elasticPolicy,omitempty"`
	EnvInjection   *EnvInjection       `json:"envInjection,omitempty"`
}

// EnvInjection names containers of the runtime's other jobs (an
// initializer's, say) that get torch's PET_* variables too (v2.3).
type EnvInjection struct {
	Targets []EnvInjectionTarget `json:"targets,omitempty"`
}

// EnvInjectionTarget is one job and its containers.
type EnvInjectionTarget struct {
	JobName        string   `json:"jobName,omitempty"`
	ContainerNames []string `json:"containerNames,omitempty"`
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
	Coscheduling *Coscheduling `json:"coscheduling,omitempty"`
	Volcano      *Volcano      `json:"volcano,omitempty"`
}

// Volcano is Volcano's gang policy: its PodGroup's network topology.
type Volcano struct {
	NetworkTopology *NetworkTopology `json:"networkTopology,omitempty"`
}

// NetworkTopology is Volcano's NetworkTopologySpec: how far across the
// network's tiers (hard or soft) the gang may be placed.
type NetworkTopology struct {
	Mode               string `json:"mode,omitempty"`
	HighestTierAllowed *int32 `json:"highestTierAllowed,omitempty"`
	HighestTierName    string `json:"highestTierName,omitempty"`
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
// fields (v0.12, which Trainer v2.3 embeds) are read and judged by what
// kiln's own gang rules already do.
type JobSetSpec struct {
	ReplicatedJobs          []ReplicatedJob `json:"replicatedJobs,omitempty"`
	Network                 json.RawMessage `json:"network,omitempty"`
	SuccessPolicy           json.RawMessage `json:"successPolicy,omitempty"`
	FailurePolicy           json.RawMessage `json:"failurePolicy,omitempty"`
	StartupPolicy           json.RawMessage `json:"startupPolicy,omitempty"`
	Coordinator             json.RawMessage `json:"coordinator,omitempty"`
	Suspend                 *bool           `json:"suspend,omitempty"`
	TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
	ManagedBy               *string         `json:"managedBy,omitempty"`
	VolumeClaimPolicies     json.RawMessage `json:"volumeClaimPolicies,omitempty"`
}

// ReplicatedJob is one job of the JobSet, run Replicas times.
type ReplicatedJob struct {
	Name      string                  `json:"name"`
	GroupName string                  `json:"groupName,omitempty"`
	Replicas  *int32                  `json:"replicas,omitempty"`
	DependsOn json.RawMessage         `json:"dependsOn,omitempty"`
	Template  batchv1.JobTemplateSpec `json:"template"`
}
