package workflow

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// kinds counts errs by code, and returns the KLN-1086 errors.
func kinds(errs []*apiv1.Error) (map[apiv1.Code]int, []*apiv1.Error) {
	count := map[apiv1.Code]int{}
	var more []*apiv1.Error
	for _, e := range errs {
		count[e.Code]++
		if e.Code == apiv1.CodeMoreErrors {
			more = append(more, e)
		}
	}
	return count, more
}

func TestCompileListsFiftyErrorsOfAKindAndCountsTheRest(t *testing.T) {
	t.Parallel()
	var spec strings.Builder
	spec.WriteString(header + "spec:\n  tasks:\n")
	for i := range 200 {
		fmt.Fprintf(&spec, "  - {name: t%d, dependsOn: [nope], command: [x]}\n", i)
	}
	for i := range 3 {
		fmt.Fprintf(&spec, "  - {name: \"bad name %d\", command: [x]}\n", i)
	}
	_, errs := compileText(t, spec.String())
	count, more := kinds(errs)
	if diff := cmp.Diff(map[apiv1.Code]int{apiv1.CodeUnknownDep: 50, apiv1.CodeMoreErrors: 1, apiv1.CodeInvalidName: 3}, count); diff != "" {
		t.Fatalf("errors by code (-want +got):\n%s\n%v", diff, errs)
	}
	want := &apiv1.Error{
		Code: apiv1.CodeMoreErrors, File: "wf.yaml", Object: "Workflow/wf", Field: "spec.tasks[*].dependsOn[*]",
		Message: "… and 150 more KLN-1007 like these", Omitted: 150, OmittedCode: apiv1.CodeUnknownDep,
	}
	if diff := cmp.Diff(want, more[0]); diff != "" {
		t.Errorf("the count (-want +got):\n%s", diff)
	}
	var shown []string
	for _, e := range errs {
		if e.Code == apiv1.CodeUnknownDep {
			shown = append(shown, e.Field)
		}
	}
	if shown[0] != "spec.tasks[0].dependsOn[0]" || shown[49] != "spec.tasks[49].dependsOn[0]" {
		t.Errorf("listed %s to %s, want the first 50 tasks'", shown[0], shown[49])
	}
	if got := errs[len(errs)-1]; got.Code != apiv1.CodeMoreErrors {
		t.Errorf("last error %v, want the count after the 50 it follows", got)
	}
}

func TestUnknownFieldsOfManyTasksAreCountedInFileOrder(t *testing.T) {
	t.Parallel()
	var spec strings.Builder
	spec.WriteString(header + "spec:\n  tasks:\n")
	for i := range 120 {
		fmt.Fprintf(&spec, "  - {name: t%d, comand: [x]}\n", i)
	}
	_, errs := compileText(t, spec.String())
	count, more := kinds(errs)
	if diff := cmp.Diff(map[apiv1.Code]int{apiv1.CodeUnknownField: 50, apiv1.CodeRequired: 50, apiv1.CodeMoreErrors: 2}, count); diff != "" {
		t.Fatalf("errors by code (-want +got):\n%s", diff)
	}
	for _, m := range more {
		if m.Omitted != 70 || m.Line != 0 {
			t.Errorf("%v: counts %d at line %d, want 70 at no line", m, m.Omitted, m.Line)
		}
	}
	if errs[0].Field != "spec.tasks[0].comand" || errs[49].Field != "spec.tasks[49].comand" {
		t.Errorf("unknown fields listed from %s to %s, want tasks 0 to 49", errs[0].Field, errs[49].Field)
	}
	if !strings.Contains(errs[0].Message, `"command"`) {
		t.Errorf("%q suggests no field, want command", errs[0].Message)
	}
}

func TestComparePathsOrdersIndicesByNumber(t *testing.T) {
	t.Parallel()
	paths := []string{"spec.tasks[10].a", "spec.tasks[9].b", "spec.tasks[9].a", "spec.tasks[100]", "spec.tasks[09].c", "spec"}
	want := []string{"spec", "spec.tasks[9].a", "spec.tasks[9].b", "spec.tasks[09].c", "spec.tasks[10].a", "spec.tasks[100]"}
	got := append([]string(nil), paths...)
	slices.SortFunc(got, comparePaths)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}
