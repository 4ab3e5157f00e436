package v1alpha1

import "time"

// KindWorkflowTemplate is the kind of a WorkflowTemplate document.
const KindWorkflowTemplate = "WorkflowTemplate"

// WorkflowTemplate is a Workflow stored in a project with kiln apply, for
// other workflows to run by name as a subworkflow (a task's
// workflow: {name: ...}) when their own files hold no Workflow of that
// name. Its spec is a Workflow's, checked as one when it is applied.
type WorkflowTemplate struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata"`
	Spec     WorkflowSpec `json:"spec"`
	// Status is where and when kiln stored the template. kiln sets it;
	// applying a document ignores it, so what kiln get prints can be
	// applied again.
	Status *TemplateStatus `json:"status,omitempty"`
}

// TemplateStatus says where and when a WorkflowTemplate was stored.
type TemplateStatus struct {
	// Project holds the template; runs of that project find it.
	Project string `json:"project"`
	// CreatedAt is when the template was first applied.
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when it was last applied; CreatedAt for a new one.
	UpdatedAt time.Time `json:"updatedAt"`
}

// Workflow returns the template as the Workflow a subworkflow task runs.
// Its kind stays WorkflowTemplate, so a run's subworkflows say where each
// came from.
func (t *WorkflowTemplate) Workflow() *Workflow {
	return &Workflow{TypeMeta: t.TypeMeta, Metadata: t.Metadata, Spec: t.Spec}
}

// TemplateApply is what kiln apply sends: files of WorkflowTemplate
// documents, to be stored in a project.
type TemplateApply struct {
	// Files hold the documents, file by file, named as the sender knows
	// them: errors name them.
	Files []SourceFile `json:"files"`
	// Project stores the templates and runs the runs; empty: the project
	// the documents' metadata.namespace names, if kiln has it, or "default".
	Project string `json:"project,omitempty"`
	// Name, when set, is the one template the files must hold (PUT
	// /api/v1/templates/{name}).
	Name string `json:"name,omitempty"`
	// AllProjects lets the files store what every project uses
	// (ClusterTrainingRuntimes). The CLI sets it; a server sets it from
	// the caller's token, never from the request.
	AllProjects bool `json:"-"`
	// WorkDir is the sender's working directory, where the tasks of the
	// runs the files hold start (see Submission.WorkDir). The CLI's own
	// engine sets it; through the API they start in their attempt's own
	// directory.
	WorkDir string `json:"-"`
}
