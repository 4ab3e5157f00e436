package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/workflow"
)

// ApplyTemplates checks the WorkflowTemplates of in.Files and stores each
// in in.Project, creating or replacing it, and returns them as stored.
// Nothing is stored when any is invalid: the errors are coded (KLN-1xxx)
// and name file, object and field. A template may run the others of the
// files and the project's stored ones. With in.Name set, the files must
// hold that one template.
func (a *App) ApplyTemplates(ctx context.Context, in apiv1.TemplateApply) ([]*apiv1.WorkflowTemplate, error) {
	project := projectOf(in.Project)
	names, docs, readErr := workflow.ReadSources(in.Files)
	tmpls, err := workflow.CheckTemplatesWith(names, docs, a.storedTemplates(ctx, project), a.storedRuntimes(ctx, project))
	if err = errors.Join(readErr, err); err != nil {
		return nil, err
	}
	if in.Name != "" {
		if err := onlyTemplate(in.Name, names, tmpls); err != nil {
			return nil, err
		}
	}
	now := time.Now()
	out := make([]*apiv1.WorkflowTemplate, len(tmpls))
	for i, t := range tmpls {
		if out[i], err = a.Store.PutTemplate(ctx, store.PutTemplateParams{Project: project, Template: t, Now: now}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// onlyTemplate checks that tmpls is the one template named name.
func onlyTemplate(name string, files []string, tmpls []*apiv1.WorkflowTemplate) error {
	if len(tmpls) == 1 && tmpls[0].Metadata.Name == name {
		return nil
	}
	e := &apiv1.Error{Code: apiv1.CodeInvalidValue, Field: "metadata.name", Message: fmt.Sprintf("the request stores WorkflowTemplate %q, and the body holds %d templates", name, len(tmpls))}
	if len(tmpls) == 1 {
		e.Object = "WorkflowTemplate/" + tmpls[0].Metadata.Name
		e.Message = fmt.Sprintf("metadata.name is %q; the request's path names %q", tmpls[0].Metadata.Name, name)
	}
	if len(files) == 1 {
		e.File = files[0]
	}
	return e
}

// ListTemplates lists a project's stored templates, by name.
func (a *App) ListTemplates(ctx context.Context, project string) ([]*apiv1.WorkflowTemplate, error) {
	return a.Store.ListTemplates(ctx, projectOf(project))
}

// GetTemplate returns a stored template; KLN-4015 if the project has none of that name.
func (a *App) GetTemplate(ctx context.Context, project, name string) (*apiv1.WorkflowTemplate, error) {
	t, err := a.Store.Template(ctx, projectOf(project), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, noTemplate(projectOf(project), name)
	}
	return t, err
}

// DeleteTemplate removes a stored template; KLN-4015 if there is none.
// Runs that use it keep the copy they were submitted with.
func (a *App) DeleteTemplate(ctx context.Context, project, name string) error {
	err := a.Store.DeleteTemplate(ctx, projectOf(project), name)
	if errors.Is(err, store.ErrNotFound) {
		return noTemplate(projectOf(project), name)
	}
	return err
}

func noTemplate(project, name string) error {
	return &apiv1.Error{
		Code: apiv1.CodeNoTemplate, Object: "WorkflowTemplate/" + name,
		Message: fmt.Sprintf("project %q has no WorkflowTemplate %q", project, name),
	}
}

// storedTemplates looks up the stored templates of project, for the
// subworkflows of what is being checked that its files lack.
func (a *App) storedTemplates(ctx context.Context, project string) workflow.Stored {
	return store.TemplateLookup(ctx, a.Store, project)
}

// projectOf is project, or "default" when it is empty.
func projectOf(project string) string { return cmp.Or(project, "default") }
