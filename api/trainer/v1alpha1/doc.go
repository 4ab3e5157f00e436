// Package v1alpha1 holds the documents of Kubeflow Trainer v2's API group,
// trainer.kubeflow.org/v1alpha1, as kiln reads them: TrainJob,
// TrainingRuntime and ClusterTrainingRuntime with Trainer's own field
// names and shapes (v2.1, and the fields v2.2 and v2.3 added; a runtime's
// template is JobSet v0.12's), so that a document
// written for Trainer runs on kiln unchanged. kiln translates them into its
// own kinds (internal/workflow/trainer.go); docs/kubeflow.md says which
// field maps to which, and which are ignored where.
//
// Only what Trainer documents for users is here. Status is written by
// kiln in Trainer's shape (conditions, jobsStatus, trainerStatus) and
// dropped when a document is read.
package v1alpha1

// Group and version of the documents.
const (
	Group      = "trainer.kubeflow.org"
	APIVersion = Group + "/v1alpha1"
)

// Kinds of the group.
const (
	KindTrainJob               = "TrainJob"
	KindTrainingRuntime        = "TrainingRuntime"
	KindClusterTrainingRuntime = "ClusterTrainingRuntime"
)

// Names of the replicated jobs of a runtime's JobSet template that kiln
// realises, and the container each one runs.
const (
	JobNode             = "node"
	JobLauncher         = "launcher"
	JobDatasetInit      = "dataset-initializer"
	JobModelInit        = "model-initializer"
	ContainerNode       = "node"
	ManagedByTrainer    = "trainer.kubeflow.org/trainjob-controller"
	ManagedByMultiKueue = "kueue.x-k8s.io/multikueue"
)
