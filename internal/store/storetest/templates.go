package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// newTemplate is a WorkflowTemplate named name whose one task runs command.
func newTemplate(name, command string) *apiv1.WorkflowTemplate {
	def := "1"
	return &apiv1.WorkflowTemplate{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflowTemplate},
		Metadata: apiv1.ObjectMeta{Name: name, Labels: map[string]string{"team": "ml"}},
		Spec: apiv1.WorkflowSpec{
			Params: []apiv1.Param{{Name: "n", Default: &def}},
			Tasks:  []apiv1.Task{{Name: "t", Command: []string{command, "{{params.n}}"}}},
		},
	}
}

func testTemplates(t *testing.T, s store.Store) {
	ctx := t.Context()
	put := func(project string, tmpl *apiv1.WorkflowTemplate, now time.Time) *apiv1.WorkflowTemplate {
		t.Helper()
		got, err := s.PutTemplate(ctx, store.PutTemplateParams{Project: project, Template: tmpl, Now: now})
		if err != nil {
			t.Fatalf("PutTemplate(%s, %s): %v", project, tmpl.Metadata.Name, err)
		}
		return got
	}
	put("a", newTemplate("train", "v1"), t0)
	put("a", newTemplate("eval", "e"), t0)
	put("b", newTemplate("train", "other"), t0)
	replaced := put("a", newTemplate("train", "v2"), t0.Add(time.Hour))

	want := newTemplate("train", "v2")
	want.Status = &apiv1.TemplateStatus{Project: "a", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour)}
	if diff := cmp.Diff(want, replaced); diff != "" {
		t.Errorf("PutTemplate replacing (-want +got):\n%s", diff)
	}
	got, err := s.Template(ctx, "a", "train")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Template(a, train) after a replace (-want +got):\n%s", diff)
	}
	if got, err := s.Template(ctx, "b", "train"); err != nil || got.Spec.Tasks[0].Command[0] != "other" || got.Status.Project != "b" {
		t.Errorf("Template(b, train) = %+v, %v; projects keep their own", got, err)
	}
	if _, err := s.Template(ctx, "c", "train"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Template of another project = %v, want ErrNotFound", err)
	}

	list, err := s.ListTemplates(ctx, "a")
	var names []string
	for _, tmpl := range list {
		names = append(names, tmpl.Metadata.Name+"/"+tmpl.Status.Project)
	}
	if err != nil || !cmp.Equal(names, []string{"eval/a", "train/a"}) {
		t.Errorf("ListTemplates(a) = %v, %v; want eval, train of a, by name", names, err)
	}
	if list, err := s.ListTemplates(ctx, "empty"); err != nil || list == nil || len(list) != 0 {
		t.Errorf("ListTemplates(empty) = %#v, %v; want an empty list", list, err)
	}

	if err := s.DeleteTemplate(ctx, "a", "train"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Template(ctx, "a", "train"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Template after delete = %v, want ErrNotFound", err)
	}
	if err := s.DeleteTemplate(ctx, "a", "train"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice = %v, want ErrNotFound", err)
	}
	if _, err := s.Template(ctx, "b", "train"); err != nil {
		t.Errorf("deleting a's template touched b's: %v", err)
	}
	again := put("a", newTemplate("train", "v3"), t0.Add(2*time.Hour))
	if !again.Status.CreatedAt.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("a template applied after its delete was created at %v, want anew at %v", again.Status.CreatedAt, t0.Add(2*time.Hour))
	}
}
