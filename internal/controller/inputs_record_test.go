package controller

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A task's status records what each of its references resolved to: its
// parameters, its map item and its upstream outputs (an artifact by its
// path), and a map the list it expanded, but not its own names and
// directories.
func TestNodesRecordTheirResolvedInputs(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	id := e.submit(t, `spec:
  params: [{name: greeting, default: hello}]
  tasks:
  - name: a
    command: [sh, -c, 'printf "%s world" "$0" > $KILN_OUTPUTS/msg; touch $KILN_OUTPUTS/data.txt', '{{params.greeting}}']
    outputs: {parameters: [{name: msg}], artifacts: [{name: file, path: data.txt}]}
  - name: b
    dependsOn: [a]
    command: [sh, -c, 'echo "$0 $1 $2 $3"', '{{tasks.a.outputs.parameters.msg}}', '{{tasks.a.outputs.artifacts.file}}', '{{run.id}}', '{{outputs.dir}}']
  - name: list
    command: [sh, -c, 'echo -n "[\"x\"]" > $KILN_OUTPUTS/items']
    outputs: {parameters: [{name: items}]}
  - name: each
    dependsOn: [list]
    forEach: {from: "{{tasks.list.outputs.parameters.items}}"}
    command: [sh, -c, 'echo "$0 $1"', '{{item}}', '{{ item.index }}']
`, map[string]string{"greeting": "hi"})
	run := e.wait(t, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s %s", id, run.Status.Phase, run.Status.Message)
	}
	want := map[string]map[string]string{
		"a": {"params.greeting": "hi"},
		"b": {
			"tasks.a.outputs.parameters.msg": "hi world",
			"tasks.a.outputs.artifacts.file": filepath.Join(e.home, "runs", string(id), "a", "1", "outputs", "data.txt"),
		},
		"each":   {"tasks.list.outputs.parameters.items": `["x"]`}, // what its list was read from
		"each.0": {"item": "x", "item.index": "0"},
	}
	for name, w := range want {
		if got := nodeOf(run, name).Inputs; !cmp.Equal(got, w) {
			t.Errorf("%s's inputs: %v", name, cmp.Diff(w, got))
		}
	}
}
