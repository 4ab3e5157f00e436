package app

import (
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func openApp(t *testing.T) *App {
	t.Helper()
	a, err := Open(t.Context(), Config{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func apply(t *testing.T, a *App, yaml string) error {
	t.Helper()
	_, err := a.Apply(t.Context(), apiv1.TemplateApply{Files: []apiv1.SourceFile{{Name: "s.yaml", Data: []byte(yaml)}}})
	return err
}

// wantErr checks that err holds an error of code on field of object
// whose message says says.
func wantErr(t *testing.T, err error, code apiv1.Code, object, field, says string) {
	t.Helper()
	for _, e := range apiv1.Errors(err) {
		if e.Code == code && e.Object == object && e.Field == field && strings.Contains(e.Message, says) {
			return
		}
	}
	t.Errorf("want %s %s: %s: %q; got %v", code, object, field, says, err)
}

const paramsTemplate = `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: train}
spec:
  params:
    - {name: epochs}
    - {name: lr, default: "0.1"}
  tasks:
    - {name: a, command: ["/bin/true"]}
`

// TestApplyChecksScheduleParams applies schedules whose params the
// workflow they run does not declare, or leave a required one unset: each
// is refused at apply, naming spec.params, rather than failing every tick.
func TestApplyChecksScheduleParams(t *testing.T) {
	a := openApp(t)
	if err := apply(t, a, paramsTemplate); err != nil {
		t.Fatal(err)
	}
	err := apply(t, a, `apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: stored}
spec:
  schedule: "@hourly"
  workflowTemplateRef: {name: train}
  params: {epochs: "3", batch: "32"}
---
apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: unset}
spec:
  schedule: "@hourly"
  workflowTemplateRef: {name: train}
---
apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: inline}
spec:
  schedule: "@hourly"
  params: {size: "1"}
  workflow:
    tasks:
      - {name: a, command: ["/bin/true"]}
`)
	wantErr(t, err, apiv1.CodeUnknownParam, "Schedule/stored", "spec.params", `parameter "batch" is not declared by WorkflowTemplate "train"`)
	wantErr(t, err, apiv1.CodeMissingParam, "Schedule/unset", "spec.params", `parameter "epochs" has no default`)
	wantErr(t, err, apiv1.CodeUnknownParam, "Schedule/inline", "spec.params", `parameter "size" is not declared by its spec.workflow`)
	if list, _ := a.ListSchedules(t.Context(), ""); len(list) != 0 {
		t.Errorf("stored %d schedules that fail their checks", len(list))
	}
	// A template applied in the same files is the one checked against.
	err = apply(t, a, strings.Replace(paramsTemplate, "{name: epochs}", "{name: epochs}\n    - {name: batch}", 1)+`---
apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: stored}
spec:
  schedule: "@hourly"
  workflowTemplateRef: {name: train}
  params: {epochs: "3", batch: "32"}
`)
	if err != nil {
		t.Errorf("params the template applied with it declares: %v", err)
	}
}

// TestApplyRefusesScheduleThatNeverFires applies 30 February and an
// interval under a second; and a schedule of 30 February stored before
// apply refused it reads with no next tick and says why.
func TestApplyRefusesScheduleThatNeverFires(t *testing.T) {
	a := openApp(t)
	doc := func(name, expr string) string {
		return "apiVersion: kiln.dev/v1alpha1\nkind: Schedule\nmetadata: {name: " + name + "}\nspec:\n  schedule: \"" + expr +
			"\"\n  workflow:\n    tasks:\n      - {name: a, command: [\"/bin/true\"]}\n"
	}
	err := apply(t, a, doc("feb", "0 0 30 2 *")+"---\n"+doc("fast", "@every 100ms"))
	wantErr(t, err, apiv1.CodeCron, "Schedule/feb", "spec.schedule", `"0 0 30 2 *" never fires`)
	wantErr(t, err, apiv1.CodeCron, "Schedule/fast", "spec.schedule", "the least is 1s")

	s := &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "feb"}, Spec: apiv1.ScheduleSpec{
		Schedule: "0 0 30 2 *", Workflow: &apiv1.WorkflowSpec{},
	}}
	if _, err := a.Store.PutSchedule(t.Context(), store.PutScheduleParams{Project: "default", Schedule: s, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := a.GetSchedule(t.Context(), "", "feb")
	if err != nil {
		t.Fatal(err)
	}
	if st := got.Status; st.NextScheduleTime != nil || !st.Never || st.Code != apiv1.CodeCron || !strings.Contains(st.Message, "never fires") {
		t.Errorf("a stored schedule of 30 February: %+v", st)
	}
}
