package v1alpha1

import (
	"encoding/json"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TypeMeta names a document's schema.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// ObjectMeta is Kubernetes object metadata. namespace is read as the kiln
// project the object belongs to; generateName stands for name when there
// is none (kiln's run IDs are unique anyway). The fields an API server
// writes are read, and named as ignored, so that a document exported with
// kubectl get -o yaml is read as it is.
type ObjectMeta struct {
	Name         string            `json:"name,omitempty"`
	GenerateName string            `json:"generateName,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	ServerFields `json:",inline"`
}

// ServerFields are the fields of Kubernetes object metadata that an API
// server writes, or its controllers: kiln keeps its own record of a run.
type ServerFields struct {
	UID                        json.RawMessage `json:"uid,omitempty"`
	ResourceVersion            json.RawMessage `json:"resourceVersion,omitempty"`
	Generation                 json.RawMessage `json:"generation,omitempty"`
	CreationTimestamp          json.RawMessage `json:"creationTimestamp,omitempty"`
	DeletionTimestamp          json.RawMessage `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds json.RawMessage `json:"deletionGracePeriodSeconds,omitempty"`
	OwnerReferences            json.RawMessage `json:"ownerReferences,omitempty"`
	Finalizers                 json.RawMessage `json:"finalizers,omitempty"`
	ManagedFields              json.RawMessage `json:"managedFields,omitempty"`
	SelfLink                   json.RawMessage `json:"selfLink,omitempty"`
}

// Set lists the JSON names of the fields of f that are written, in order.
func (f *ServerFields) Set() []string {
	var out []string
	for _, v := range []struct {
		name string
		raw  json.RawMessage
	}{
		{"uid", f.UID},
		{"resourceVersion", f.ResourceVersion},
		{"generation", f.Generation},
		{"creationTimestamp", f.CreationTimestamp},
		{"deletionTimestamp", f.DeletionTimestamp},
		{"deletionGracePeriodSeconds", f.DeletionGracePeriodSeconds},
		{"ownerReferences", f.OwnerReferences},
		{"finalizers", f.Finalizers},
		{"managedFields", f.ManagedFields},
		{"selfLink", f.SelfLink},
	} {
		if s := string(v.raw); s != "" && s != "null" {
			out = append(out, v.name)
		}
	}
	return out
}

// TrainJob is Trainer's training job.
type TrainJob struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     TrainJobSpec `json:"spec"`
	// Status is kiln's to write; a document's own is dropped.
	Status json.RawMessage `json:"status,omitempty"`
}

// TrainJobSpec is what a TrainJob runs.
type TrainJobSpec struct {
	RuntimeRef  RuntimeRef   `json:"runtimeRef"`
	Initializer *Initializer `json:"initializer,omitempty"`
	Trainer     *Trainer     `json:"trainer,omitempty"`
	// Labels and Annotations (v2.1) go to the job's pods.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// PodTemplateOverrides (v2.1) shape the pods of the named jobs.
	PodTemplateOverrides []PodTemplateOverride `json:"podTemplateOverrides,omitempty"`
	// RuntimePatches (v2.2) replaced PodTemplateOverrides.
	RuntimePatches        []RuntimePatch `json:"runtimePatches,omitempty"`
	Suspend               *bool          `json:"suspend,omitempty"`
	ActiveDeadlineSeconds *int64         `json:"activeDeadlineSeconds,omitempty"`
	ManagedBy             *string        `json:"managedBy,omitempty"`
}

// RuntimeRef names the runtime a TrainJob runs with. apiGroup defaults to
// trainer.kubeflow.org, kind to ClusterTrainingRuntime.
type RuntimeRef struct {
	Name     string  `json:"name"`
	APIGroup *string `json:"apiGroup,omitempty"`
	Kind     *string `json:"kind,omitempty"`
}

// Initializer fetches a dataset and a pre-trained model before training.
type Initializer struct {
	Dataset *InitializerSource `json:"dataset,omitempty"`
	Model   *InitializerSource `json:"model,omitempty"`
}

// InitializerSource is Trainer's DatasetInitializer and ModelInitializer.
type InitializerSource struct {
	StorageUri *string                      `json:"storageUri,omitempty"`
	Env        []corev1.EnvVar              `json:"env,omitempty"`
	SecretRef  *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// Trainer overrides the runtime's trainer container.
type Trainer struct {
	Image            *string                      `json:"image,omitempty"`
	Command          []string                     `json:"command,omitempty"`
	Args             []string                     `json:"args,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	NumNodes         *int32                       `json:"numNodes,omitempty"`
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
	// NumProcPerNode is a number or auto, cpu, gpu (v2.1), a number (v2.2).
	NumProcPerNode *intstr.IntOrString `json:"numProcPerNode,omitempty"`
}

// PodTemplateOverride shapes the pods of the jobs it targets (v2.1).
type PodTemplateOverride struct {
	TargetJobs []TargetJob      `json:"targetJobs"`
	Metadata   *PodMetadata     `json:"metadata,omitempty"`
	Spec       *PodSpecOverride `json:"spec,omitempty"`
}

// TargetJob names a replicated job of the runtime.
type TargetJob struct {
	Name string `json:"name"`
}

// PodMetadata is the labels and annotations an override adds. It is
// Kubernetes object metadata upstream: its other fields are read, and
// named as ignored (a pod's name and namespace are kiln's).
type PodMetadata struct {
	Labels       map[string]string `json:"labels,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Name         string            `json:"name,omitempty"`
	GenerateName string            `json:"generateName,omitempty"`
	Namespace    string            `json:"namespace,omitempty"`
	ServerFields `json:",inline"`
}

// Others lists the JSON names of the fields of m written besides labels
// and annotations.
func (m *PodMetadata) Others() []string {
	var out []string
	for name, v := range map[string]string{"name": m.Name, "generateName": m.GenerateName, "namespace": m.Namespace} {
		if v != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return append(out, m.Set()...)
}

// PodSpecOverride is the part of a pod spec an override may set.
type PodSpecOverride struct {
	ServiceAccountName            *string                       `json:"serviceAccountName,omitempty"`
	NodeSelector                  map[string]string             `json:"nodeSelector,omitempty"`
	Affinity                      *corev1.Affinity              `json:"affinity,omitempty"`
	Tolerations                   []corev1.Toleration           `json:"tolerations,omitempty"`
	Volumes                       []corev1.Volume               `json:"volumes,omitempty"`
	InitContainers                []ContainerOverride           `json:"initContainers,omitempty"`
	Containers                    []ContainerOverride           `json:"containers,omitempty"`
	SchedulingGates               []corev1.PodSchedulingGate    `json:"schedulingGates,omitempty"`
	ImagePullSecrets              []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	SecurityContext               *corev1.PodSecurityContext    `json:"securityContext,omitempty"`
	TerminationGracePeriodSeconds *int64                        `json:"terminationGracePeriodSeconds,omitempty"`
}

// ContainerOverride adds env, mounts and a security context to a
// container of the runtime.
type ContainerOverride struct {
	Name            string                  `json:"name"`
	Env             []corev1.EnvVar         `json:"env,omitempty"`
	VolumeMounts    []corev1.VolumeMount    `json:"volumeMounts,omitempty"`
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}

// RuntimePatch is v2.2's form of an override, keyed by its manager.
type RuntimePatch struct {
	Manager             string                    `json:"manager,omitempty"`
	Time                *string                   `json:"time,omitempty"`
	TrainingRuntimeSpec *TrainingRuntimeSpecPatch `json:"trainingRuntimeSpec,omitempty"`
}

// TrainingRuntimeSpecPatch patches the runtime's JobSet template.
type TrainingRuntimeSpecPatch struct {
	Template *JobSetTemplatePatch `json:"template,omitempty"`
}

// JobSetTemplatePatch patches the JobSet's metadata and replicated jobs.
type JobSetTemplatePatch struct {
	Metadata *PodMetadata     `json:"metadata,omitempty"`
	Spec     *JobSetSpecPatch `json:"spec,omitempty"`
}

// JobSetSpecPatch lists patches per replicated job.
type JobSetSpecPatch struct {
	ReplicatedJobs []ReplicatedJobPatch `json:"replicatedJobs,omitempty"`
}

// ReplicatedJobPatch patches the replicated job named Name.
type ReplicatedJobPatch struct {
	Name     string            `json:"name"`
	Template *JobTemplatePatch `json:"template,omitempty"`
}

// JobTemplatePatch patches a job's metadata and pod template.
type JobTemplatePatch struct {
	Metadata *PodMetadata  `json:"metadata,omitempty"`
	Spec     *JobSpecPatch `json:"spec,omitempty"`
}

// JobSpecPatch patches a job's pod template.
type JobSpecPatch struct {
	Template *PodTemplatePatch `json:"template,omitempty"`
}

// PodTemplatePatch patches a pod template.
type PodTemplatePatch struct {
	Metadata *PodMetadata     `json:"metadata,omitempty"`
	Spec     *PodSpecOverride `json:"spec,omitempty"`
}
