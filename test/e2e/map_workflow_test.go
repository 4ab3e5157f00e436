package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestAMapRunsAWorkflowPerItem: forEach with workflow runs the workflow
// once per item (Flyte's map over a launch plan, Argo's loop over a DAG
// template), its params read from the item, and gathers the workflow's
// outputs into one list per output; a rerun from the map finds the
// workflow in the run's stored spec; a stored template can be mapped too.
func TestAMapRunsAWorkflowPerItem(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	seen := filepath.Join(dir, "seen")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: sweep}
spec:
  tasks:
  - name: grid
    forEach: {items: [{lr: "0.1"}, {lr: "0.01"}, {lr: "0.001"}], maxParallel: 2}
    workflow:
      name: train-eval
      params: [{name: lr, value: "{{item.lr}}"}]
  - name: report
    dependsOn: [grid]
    command: [sh, -c, 'echo "$0" > `+seen+`', "{{tasks.grid.outputs.parameters.score}}"]
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: train-eval}
spec:
  params: [{name: lr}]
  outputs:
    parameters: [{name: score, value: "{{tasks.eval.outputs.parameters.score}}"}]
  tasks:
  - name: train
    command: ["true"]
  - name: eval
    dependsOn: [train]
    command: [sh, -c, 'echo "s-{{params.lr}}" > $KILN_OUTPUTS/score']
    outputs: {parameters: [{name: score}]}
`)
	if r := kilnBounded(t, home, "run", "-q", wf); r.code != 0 {
		t.Fatalf("kiln run: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if got := strings.TrimSpace(readOrEmpty(seen)); got != `["s-0.1","s-0.01","s-0.001"]` {
		t.Errorf("report read %s, want the three items' scores in item order", got)
	}
	id := runs(t, home)[0].ID
	run := describe(t, home, id)
	if n := nodeNamed(t, run, "grid.1.eval"); n.Phase != apiv1.PhaseSucceeded || n.Outputs["score"] != "s-0.01" {
		t.Errorf("grid.1.eval is %s with %v; want Succeeded with s-0.01", n.Phase, n.Outputs)
	}
	if r := kilnBounded(t, home, "rerun", "-q", string(id), "--from", "grid"); r.code != 0 {
		t.Errorf("kiln rerun --from grid: %d %s%s", r.code, r.stdout, r.stderr)
	}

	tmpl := writeFile(t, dir, "tmpl.yaml", `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: echo-lr}
spec:
  params: [{name: lr}]
  tasks:
  - {name: say, command: [sh, -c, 'echo "{{params.lr}}" >> `+filepath.Join(dir, "said")+`']}
`)
	if r := kiln(t, home, "apply", "-f", tmpl); r.code != 0 {
		t.Fatalf("kiln apply: %d %s", r.code, r.stderr)
	}
	mapped := writeFile(t, dir, "mapped.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: mapped}
spec:
  tasks:
  - name: each
    forEach: {range: {count: 2}}
    workflow: {name: echo-lr, params: [{name: lr, value: "{{item}}"}]}
`)
	if r := kilnBounded(t, home, "run", "-q", mapped); r.code != 0 || strings.Count(readOrEmpty(filepath.Join(dir, "said")), "\n") != 2 {
		t.Errorf("a map of a stored template: %d %s%s, said %q; want two runs of it", r.code, r.stdout, r.stderr, readOrEmpty(filepath.Join(dir, "said")))
	}

	bad := writeFile(t, dir, "bad.yaml", strings.Replace(readOrEmpty(wf), "    workflow:\n", "    resources: {cpu: 1}\n    workflow:\n", 1))
	if r := kiln(t, home, "validate", bad); r.code == 0 || !strings.Contains(r.stderr, "spec.tasks[0].resources") {
		t.Errorf("a map of a workflow with resources: %d %s; want refused at spec.tasks[0].resources", r.code, r.stderr)
	}
}

// TestArtifactsLeaveAMap: a downstream task reads a map's output
// artifact as the JSON list of its items' paths, in item order, null for
// an item that failed within the map's minSuccessRatio; a map of a
// workflow gathers the workflow's output artifact the same way.
func TestArtifactsLeaveAMap(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	seen, seenSub := filepath.Join(dir, "seen"), filepath.Join(dir, "seen-sub")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: shards}
spec:
  tasks:
  - name: shard
    forEach: {items: ["a", "b", "c"], minSuccessRatio: 0.5}
    command: [sh, -c, 'test "{{item}}" != b || exit 1; echo "part {{item}}" > $KILN_OUTPUTS/part.txt']
    outputs: {artifacts: [{name: part, path: part.txt}]}
  - name: merge
    dependsOn: [shard]
    command: [sh, -c, 'printf "%s" "$0" > `+seen+`', "{{tasks.shard.outputs.artifacts.part}}"]
  - name: per-item
    forEach: {items: ["x", "y"]}
    workflow: {name: make-file, params: [{name: word, value: "{{item}}"}]}
  - name: merge-sub
    dependsOn: [per-item]
    command: [sh, -c, 'printf "%s" "$0" > `+seenSub+`', "{{tasks.per-item.outputs.artifacts.file}}"]
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: make-file}
spec:
  params: [{name: word}]
  outputs:
    artifacts: [{name: file, value: "{{tasks.write.outputs.artifacts.out}}"}]
  tasks:
  - name: write
    command: [sh, -c, 'echo "word {{params.word}}" > $KILN_OUTPUTS/out.txt']
    outputs: {artifacts: [{name: out, path: out.txt}]}
`)
	if r := kilnBounded(t, home, "run", "-q", wf); r.code != 0 {
		t.Fatalf("kiln run: %d %s%s", r.code, r.stdout, r.stderr)
	}
	for file, want := range map[string][]string{seen: {"part a\n", "", "part c\n"}, seenSub: {"word x\n", "word y\n"}} {
		var paths []*string
		if err := json.Unmarshal([]byte(readOrEmpty(file)), &paths); err != nil {
			t.Fatalf("%s read %q: %v; want a JSON list of paths", filepath.Base(file), readOrEmpty(file), err)
		}
		if len(paths) != len(want) {
			t.Fatalf("%s read %d paths, want %d (one per item)", filepath.Base(file), len(paths), len(want))
		}
		for i, p := range paths {
			switch {
			case want[i] == "" && p != nil:
				t.Errorf("%s: item %d failed but has a path %q", filepath.Base(file), i, *p)
			case want[i] != "" && (p == nil || readOrEmpty(*p) != want[i]):
				t.Errorf("%s: item %d's path %v does not hold %q", filepath.Base(file), i, p, want[i])
			}
		}
	}
}

// TestAMapsArtifactsAsADirectory: {{tasks.MAP.outputs.artifacts.A.dir}}
// is a directory holding one entry per item that produced A, named by
// its index and sorting in item order (Argo's gathering of a loop's
// artifacts under one key), for a file and for a directory artifact; it
// is refused at submit for a task that is not a map.
func TestAMapsArtifactsAsADirectory(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	seen := filepath.Join(dir, "seen")
	items := make([]string, 11)
	for i := range items {
		items[i] = fmt.Sprintf("%q", fmt.Sprint("w", i))
	}
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: gather}
spec:
  tasks:
  - name: shard
    forEach: {items: [`+strings.Join(items, ", ")+`], minSuccessRatio: 0.5}
    command: [sh, -c, 'test "{{item}}" != w3 || exit 1; echo "{{item}}" > $KILN_OUTPUTS/part.txt; mkdir $KILN_OUTPUTS/model; echo "m{{item.index}}" > $KILN_OUTPUTS/model/w']
    outputs: {artifacts: [{name: part, path: part.txt}, {name: model, path: model}]}
  - name: merge
    dependsOn: [shard]
    command: [sh, -c, 'cd "{{tasks.shard.outputs.artifacts.part.dir}}" && for f in *; do printf "%s=%s " "$f" "$(cat $f)"; done > `+seen+`; cat "{{tasks.shard.outputs.artifacts.model.dir}}"/10/w >> `+seen+`']
`)
	if r := kilnBounded(t, home, "run", "-q", wf); r.code != 0 {
		t.Fatalf("kiln run: %d %s%s", r.code, r.stdout, r.stderr)
	}
	want := "00=w0 01=w1 02=w2 04=w4 05=w5 06=w6 07=w7 08=w8 09=w9 10=w10 m10\n"
	if got := readOrEmpty(seen); got != want {
		t.Errorf("the directory of the map's artifacts read %q, want %q (item 3 failed: no entry)", got, want)
	}

	bad := writeFile(t, dir, "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: bad}
spec:
  tasks:
  - name: one
    command: [sh, -c, 'echo > $KILN_OUTPUTS/f']
    outputs: {artifacts: [{name: f, path: f}]}
  - name: read
    dependsOn: [one]
    command: [ls, "{{tasks.one.outputs.artifacts.f.dir}}"]
`)
	r := kiln(t, home, "validate", bad)
	if r.code == 0 || !strings.Contains(r.stderr, "is not a map") || !strings.Contains(r.stderr, "spec.tasks[1]") {
		t.Errorf("validate of .dir on a task that is not a map: exit %d, %q; want it refused naming the task's field", r.code, r.stderr)
	}
}

// TestAFragmentRunsWorkflowsAndTemplates: a dynamic task's fragment may
// run a workflow of the run's files (as a subworkflow) and map a stored
// template over items, as Flyte's @dynamic calls launch plans; the
// workflows it ran are recorded with it, so that after kill -9 the new
// engine rebuilds the same children although the template was replaced
// meanwhile; a fragment naming a workflow nobody has fails with KLN-3013.
func TestAFragmentRunsWorkflowsAndTemplates(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, gate := filepath.Join(dir, "ledger"), filepath.Join(dir, "gate")
	tmpl := func(word string) string {
		return writeFile(t, t.TempDir(), "tmpl.yaml", `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: shout}
spec:
  params: [{name: num}]
  tasks:
  - {name: say, command: [sh, -c, 'until test -e `+gate+`; do sleep 0.05; done; echo "`+word+`-{{params.num}}" >> `+ledger+`']}
`)
	}
	if r := kiln(t, home, "apply", "-f", tmpl("shout")); r.code != 0 {
		t.Fatalf("kiln apply: %d %s", r.code, r.stderr)
	}
	fragment := `{"tasks": [` +
		`{"name": "prep", "workflow": {"name": "prepare"}},` +
		`{"name": "each", "dependsOn": ["prep"], "forEach": {"items": ["1", "2"]}, "workflow": {"name": "shout", "params": [{"name": "num", "value": "\173\173item\175\175"}]}}]}` // {{item}}, as printf writes it: the task's own command must not hold it
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: plan-at-run-time}
spec:
  tasks:
  - name: gen
    dynamic: {output: fragment, workflows: [prepare]}
    command: [sh, -c, 'printf "$0" > $KILN_OUTPUTS/fragment', '`+fragment+`']
    outputs: {parameters: [{name: fragment}]}
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: prepare}
spec:
  tasks:
  - {name: ready, command: [sh, -c, 'echo prepared >> `+ledger+`']}
`)
	first := startKiln(t, home, "run", wf)
	waitFor(t, "the subworkflow of the fragment to run", func() bool { return fileHasLine(ledger) })
	id := runs(t, home)[0].ID
	waitFor(t, "the template's items to start", func() bool {
		run := describe(t, home, id)
		n := run.Status.Node("gen.each.1.say")
		return n != nil && n.Phase == apiv1.PhaseRunning
	})
	killNine(t, first)
	if r := kiln(t, home, "apply", "-f", tmpl("whisper")); r.code != 0 { // replaced meanwhile: the run keeps what it recorded
		t.Fatalf("kiln apply: %d %s", r.code, r.stderr)
	}
	writeFile(t, dir, "gate", "")
	if r := kilnBounded(t, home, "resume"); r.code != 0 {
		t.Fatalf("resume exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if got, want := sortedLines(t, ledger), []string{"prepared", "shout-1", "shout-2"}; !slices.Equal(got, want) {
		t.Errorf("the fragment's tasks wrote %v, want %v", got, want)
	}
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run %s: %s", run.Status.Phase, run.Status.Message)
	}

	bad := writeFile(t, dir, "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: bad-fragment}
spec:
  tasks:
  - name: gen
    dynamic: {output: fragment}
    command: [sh, -c, 'echo "{\"tasks\": [{\"name\": \"x\", \"workflow\": {\"name\": \"nobody\"}}]}" > $KILN_OUTPUTS/fragment']
    outputs: {parameters: [{name: fragment}]}
`)
	r := kilnBounded(t, home, "run", "-q", bad)
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-3013") || !strings.Contains(r.stderr, `"nobody"`) {
		t.Errorf("a fragment running an unknown workflow: exit %d, %s; want KLN-3013 naming it", r.code, r.stderr)
	}
	undeclared := writeFile(t, dir, "undeclared.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: declares-nobody}
spec:
  tasks:
  - name: gen
    dynamic: {output: fragment, workflows: [nobody]}
    command: [sh, -c, 'echo "{\"tasks\": []}" > $KILN_OUTPUTS/fragment']
    outputs: {parameters: [{name: fragment}]}
`)
	r = kiln(t, home, "run", "-q", undeclared)
	if r.code == 0 || !strings.Contains(r.stderr, string(apiv1.CodeSubworkflow)) || !strings.Contains(r.stderr, "spec.tasks[0].dynamic.workflows[0]") {
		t.Errorf("a dynamic task naming a workflow nobody has: exit %d, %s; want %s at submit, naming the field", r.code, r.stderr, apiv1.CodeSubworkflow)
	}
}

// TestAnArtifactLeavesAFragment: a dynamic task's artifact is its
// fragment's output artifact, declared on the task without a path (a
// path is refused: the task's own command writes only the fragment), and
// a downstream task reads it.
func TestAnArtifactLeavesAFragment(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	seen := filepath.Join(dir, "seen")
	fragment := `{"tasks": [{"name": "w", "command": ["sh", "-c", "echo from the fragment > $KILN_OUTPUTS/r.txt"], "outputs": {"artifacts": [{"name": "out", "path": "r.txt"}]}}], ` +
		`"outputs": {"artifacts": [{"name": "report", "value": "\173\173tasks.w.outputs.artifacts.out\175\175"}]}}`
	doc := func(path string) string {
		return writeFile(t, t.TempDir(), "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: fragment-artifact}
spec:
  tasks:
  - name: gen
    dynamic: {output: fragment}
    command: [sh, -c, 'printf "$0" > $KILN_OUTPUTS/fragment', '`+fragment+`']
    outputs: {parameters: [{name: fragment}], artifacts: [{name: report`+path+`}]}
  - name: read
    dependsOn: [gen]
    command: [sh, -c, 'cat "{{tasks.gen.outputs.artifacts.report}}" > `+seen+`']
`)
	}
	if r := kiln(t, home, "validate", doc(", path: r.txt")); r.code == 0 || !strings.Contains(r.stderr, "spec.tasks[0].outputs.artifacts[0].path") {
		t.Errorf("a dynamic task's artifact with a path: exit %d, %s; want it refused at the path", r.code, r.stderr)
	}
	if r := kilnBounded(t, home, "run", "-q", doc("")); r.code != 0 {
		t.Fatalf("kiln run: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if got := readOrEmpty(seen); got != "from the fragment\n" {
		t.Errorf("read saw %q, want the fragment task's artifact", got)
	}
}
