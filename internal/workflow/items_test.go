package workflow

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestMapItemsRefuseYAMLBareBooleansButKeepTrueAndFalse(t *testing.T) {
	t.Parallel()
	_, errs := compileFiles(t, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: yn}
spec:
  tasks:
  - name: m
    forEach: {items: [x, y, true, {flag: off, ok: false}, [no]]}
    command: [echo, "{{item}}"]
`)
	var fields []string
	for _, e := range errs {
		if e.Code != apiv1.CodeBareValue {
			t.Errorf("unexpected %s at %s: %s", e.Code, e.Field, e.Message)
		}
		fields = append(fields, e.Field)
	}
	want := "spec.tasks[0].forEach.items[1] spec.tasks[0].forEach.items[3].flag spec.tasks[0].forEach.items[4][0]"
	if got := strings.Join(fields, " "); got != want {
		t.Errorf("KLN-1021 at %q, want at %q", got, want)
	}
}
