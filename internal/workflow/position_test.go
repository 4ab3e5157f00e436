package workflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Every error of a file names its line and column: a document YAML
// cannot parse, an unknown field (with what was meant), and a value the
// checks refuse, in the second document of a file as in the first.
func TestErrorsSayTheirLineAndColumn(t *testing.T) {
	t.Parallel()
	text := `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: a}
spec:
  tasks:
  - name: t
    retires: 2
    command: ["true"]
---
# the second document
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: b}
spec:
  tasks:
  - name: u
    command: ["true"]
    dependsOn: [nope]
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: c}
spec: {tasks: [
`
	docs, readErr := Read("f.yaml", strings.NewReader(text))
	_, checkErr := CheckDocuments(docs, nil)
	type place struct {
		Code         apiv1.Code
		Line, Column int
		Message      string
	}
	var got []place
	for _, e := range apiv1.Errors(errors.Join(readErr, checkErr)) {
		got = append(got, place{e.Code, e.Line, e.Column, e.Message[:min(len(e.Message), 40)]})
	}
	want := []place{
		{apiv1.CodeParse, 23, 0, "did not find expected node content"},
		{apiv1.CodeUnknownField, 7, 5, `unknown field, did you mean "retries"?`},
		{apiv1.CodeUnknownDep, 18, 17, `task "u" depends on "nope", which is not`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	e := apiv1.Errors(checkErr)[0]
	if s := e.Error(); !strings.HasPrefix(s, "KLN-1002 f.yaml:7:5: Workflow/a: spec.tasks[0].retires: ") {
		t.Errorf("Error() = %q; want file:line:column first", s)
	}
}

func TestPathParts(t *testing.T) {
	t.Parallel()
	got := pathParts("spec.tasks[1].env[0].value")
	if diff := cmp.Diff([]string{"spec", "tasks", "[1]", "env", "[0]", "value"}, got); diff != "" {
		t.Errorf("pathParts (-want +got):\n%s", diff)
	}
	got = pathParts("spec.templates[0].steps[1][2].nodeSelector[kubernetes.io/arch]")
	if diff := cmp.Diff([]string{"spec", "templates", "[0]", "steps", "[1]", "[2]", "nodeSelector", "[kubernetes.io/arch]"}, got); diff != "" {
		t.Errorf("pathParts of a key with dots (-want +got):\n%s", diff)
	}
}
