package workflow

import (
	"errors"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Too many tasks are refused when the file is read, before its
// documents are converted and decoded.
func TestReadRefusesTooManyTasks(t *testing.T) {
	t.Parallel()

	_, err := Read("many.yaml", strings.NewReader(manyTasks(maxTasks+1)))
	var e *apiv1.Error
	if !errors.As(err, &e) {
		t.Fatalf("Read = %v, want KLN-1023", err)
	}
	if e.Code != apiv1.CodeOutOfRange || e.Field != "spec.tasks" || e.File != "many.yaml" || e.Object != "Workflow/many" {
		t.Errorf("Read = %+v, want KLN-1023 on spec.tasks of Workflow/many in many.yaml", e)
	}
}

// As many tasks as allowed are read, and an alias to the list counts.
func TestReadTakesMaxTasks(t *testing.T) {
	t.Parallel()

	if _, err := Read("max.yaml", strings.NewReader(manyTasks(maxTasks))); err != nil {
		t.Fatalf("Read of %d tasks: %v", maxTasks, err)
	}
	aliased := "x: &all [" + strings.Repeat("{name: a}, ", maxTasks+1) + "]\napiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: al}\nspec: {tasks: *all}\n"
	var e *apiv1.Error
	if _, err := Read("al.yaml", strings.NewReader(aliased)); !errors.As(err, &e) || e.Field != "spec.tasks" {
		t.Fatalf("Read of an aliased list = %v, want KLN-1023 on spec.tasks", err)
	}
}
