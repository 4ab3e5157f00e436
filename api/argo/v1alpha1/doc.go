// Package v1alpha1 holds the documents of Argo Workflows' API group,
// argoproj.io/v1alpha1 (Workflow, WorkflowTemplate and
// ClusterWorkflowTemplate), with Argo's field names and shapes, so that a
// workflow written for Argo runs on kiln unchanged. kiln translates each
// into its own Workflow (and, for the templates it calls, generated
// Workflows run as subworkflows; internal/workflow, argo*.go); kiln
// convert prints that translation, and docs/argo.md says which field maps
// to which.
//
// The fields kiln acts on are typed; every other field Argo documents is
// here as raw JSON, so that kiln names it as ignored or unsupported
// rather than unknown. Status is Argo's to write and is dropped.
package v1alpha1

// Group and version of the documents.
const (
	Group      = "argoproj.io"
	APIVersion = Group + "/v1alpha1"
)

// Kinds of the group that kiln reads.
const (
	KindWorkflow                = "Workflow"
	KindWorkflowTemplate        = "WorkflowTemplate"
	KindClusterWorkflowTemplate = "ClusterWorkflowTemplate"
)
