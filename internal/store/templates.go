package store

import (
	"context"
	"errors"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TemplateLookup finds the stored templates of project by name, as
// workflows to run as subworkflows: nil and no error for a name the
// project has none of. It is a workflow.Stored.
func TemplateLookup(ctx context.Context, t Templates, project string) func(name string) (*apiv1.Workflow, error) {
	return func(name string) (*apiv1.Workflow, error) {
		tmpl, err := t.Template(ctx, project, name)
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return tmpl.Workflow(), nil
	}
}
