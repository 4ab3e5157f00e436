package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The Argo documents of testdata/argo are written by hand in the shape of
// argo-workflows' examples/ (each file names the example it follows): the
// same features, small programs that run on this machine. docs/argo.md's
// table of examples lists each with the outcome checked here.

// argoDir copies testdata/argo into a directory of the test's own, where the
// tasks start.
func argoDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("testdata", "argo")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, e.Name(), string(b))
	}
	return dir
}

// argoRun is a finished run of an Argo document: what kiln run printed, the
// run as kiln describe shows it, and its logs.
type argoRun struct {
	out  result
	run  apiv1.Run
	logs string
}

// node is the run's node named name, or the child whose local name
// (after the last dot) is name; nil if there is none.
func (r argoRun) node(name string) *apiv1.NodeStatus {
	for i, n := range r.run.Status.Nodes {
		if n.Name == name || strings.HasSuffix(n.Name, "."+name) {
			return &r.run.Status.Nodes[i]
		}
	}
	return nil
}

// output is the value of the output parameter param of the first node
// that has it.
func (r argoRun) output(param string) (string, bool) {
	for _, n := range r.run.Status.Nodes {
		if v, ok := n.Outputs[param]; ok {
			return v, true
		}
	}
	return "", false
}

// runArgo runs file of dir with kiln run on home and returns the run once
// it ended; it fails the test if kiln made no run.
func runArgo(t *testing.T, home, dir, file string, params ...string) argoRun {
	t.Helper()
	args := []string{"run"}
	for _, p := range params {
		args = append(args, "-p", p)
	}
	out := kiln(t, home, append(args, filepath.Join(dir, file))...)
	list := runs(t, home)
	if len(list) == 0 {
		t.Fatalf("kiln run %s made no run: exit %d\n%s%s", file, out.code, out.stdout, out.stderr)
	}
	id := list[0].ID
	return argoRun{out: out, run: describe(t, home, id), logs: kiln(t, home, "logs", string(id)).stdout}
}

// linesHolding counts the lines of text that hold s.
func linesHolding(text, s string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// argoCase is one Argo document and what kiln does with it on the local
// backend.
type argoCase struct {
	file   string
	params []string // kiln run -p name=value
	// phase is how the run ends; "" when kiln refuses the document, with
	// code and a message naming field as written.
	phase apiv1.Phase
	code  apiv1.Code // the failed run's code, or the refusal's
	field string     // the refused field, as the document writes it
	// lines counts the log lines holding each substring.
	lines map[string]int
	// nodes are tasks (by the name the document gives them) and the phase
	// each ends in.
	nodes map[string]apiv1.Phase
	// ignored is what kiln run says of a field it ignores: "FIELD is
	// ignored on BACKEND"; or of one it honours its own way: "note: FIELD:
	// how".
	ignored string
	// check looks at what the table cannot say.
	check func(t *testing.T, r argoRun)
	// skip says why the row does not pass yet.
	skip string
}

// argoCases are the documents of testdata/argo that kiln run takes alone.
// The others (suspend, stored templates, memoize) have tests of their own.
var argoCases = []argoCase{
	{
		file: "hello-world.yaml", phase: apiv1.PhaseSucceeded,
		lines:   map[string]int{"greetings from an argo container": 1},
		ignored: "spec.templates[0].container.image is ignored on the local backend",
	},
	{
		file: "steps.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"the say template: step one speaks": 1, "the say template: step two-a speaks": 1, "the say template: step two-b speaks": 1},
	},
	{
		file: "dag-diamond.yaml", phase: apiv1.PhaseSucceeded,
		lines:   map[string]int{"corner top": 1, "corner left": 1, "corner right": 1, "corner bottom": 1},
		ignored: `note: spec.templates[0].dag.tasks[0].name: kiln names tasks with lowercase letters, digits and '-': "A" runs as "a"`,
	},
	{
		file: "dag-diamond-steps.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"loop says ": 12, "loop says top-1": 1, "loop says left-2": 1, "loop says right-3": 1, "loop says bottom-3": 1},
	},
	{
		file: "dag-multiroot.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"root or branch ": 4, "first-root": 1, "second-root": 1, "after-first": 1, "after-both": 1},
	},
	{
		file: "dag-nested.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"nested ": 16, "nested a1": 1, "nested b4": 1, "nested c2": 1, "nested d4": 1},
	},
	{file: "dag-targets.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].dag.target"},
	{
		file: "dag-targets-literal.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"target path ran ": 3, "ran A": 1, "ran C": 1, "ran E": 1, "ran B": 0, "ran D": 0},
	},
	// Argo calls C's failure handled (a task depends on C.Failed) and the
	// workflow Succeeded; kiln fails a run whose task failed.
	{
		file: "dag-enhanced-depends.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeExit,
		lines: map[string]int{"fine": 5, "broken on purpose": 1},
		nodes: map[string]apiv1.Phase{
			"runs-on-either": apiv1.PhaseSucceeded, "runs-on-one": apiv1.PhaseSucceeded,
			"never-runs": apiv1.PhaseSkipped, "runs-last": apiv1.PhaseSucceeded,
		},
	},
	{file: "coinflip.yaml", phase: apiv1.PhaseSucceeded, check: sameSideAsTheCoin},
	{file: "coinflip-recursive.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0]"},
	{file: "dag-coinflip.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[1]"},
	{
		file: "arguments-parameters.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"argument: default words from the arguments": 1},
	},
	{
		file: "arguments-parameters.yaml", params: []string{"text=words from the command line"}, phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"argument: words from the command line": 1, "default words": 0},
	},
	{
		file: "global-parameters.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"global: a word for every template": 1},
	},
	{
		file: "output-parameter.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"consumed: a value from a file": 1},
		check: outputIs("written", "a value from a file"),
	},
	{
		file: "artifact-passing.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"received: a note passed as an artifact": 1},
	},
	{file: "scripts-bash.yaml", phase: apiv1.PhaseSucceeded, check: pickedOneToHundred("the shell picked ")},
	{file: "scripts-python.yaml", phase: apiv1.PhaseSucceeded, check: pickedOneToHundred("python picked ")},
	{
		file: "loops.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"item: good morning": 1, "item: good night": 1},
	},
	{
		file: "loops-maps.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"os debian version 12.5": 1, "os alpine version 3.19": 1, "os ubuntu version 24.04": 1},
	},
	{file: "loops-sequence.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].steps[0][2].withSequence.count"},
	{
		file: "loops-sequence-literal.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{
			"seq ": 12, "seq count 0": 1, "seq count 2": 1, "seq count 3": 0, "seq range 10": 1, "seq range 12": 1,
			"seq down 2": 1, "seq down 0": 1, "seq node00": 1, "seq node02": 1,
		},
	},
	{
		file: "loops-param-argument.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"listed debian 12.5": 1, "listed alpine 3.19": 1},
	},
	{
		file: "loops-param-result.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"napping 0": 2, "napping 1": 1, "awake": 3},
	},
	{
		file: "loops-dag.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"dag loop ": 5, "dag loop before": 1, "dag loop red": 1, "dag loop green": 1, "dag loop blue": 1, "dag loop after": 1},
	},
	{file: "conditionals.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].steps[0][2].when"},
	{
		file: "conditionals-simple.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"condition held: govaluate": 1, "condition held: expr": 1, "condition held: never": 0},
		nodes: map[string]apiv1.Phase{"govaluate-false": apiv1.PhaseSkipped},
	},
	// As in Argo: C's failure is tolerated, D runs, the run succeeds.
	{
		file: "continue-on-fail.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"all is fine": 3, "failing on purpose": 1, "continueOn lets the workflow go on": 1},
	},
	// As in Argo: the step that exits 42 lets the workflow go on, and the run
	// succeeds.
	{
		file: "exit-code-output-variable.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"the step before exited 42": 1, "argo: the program exited with code 42; continueOn lets the workflow go on": 1},
	},
	{
		file: "retry-backoff.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"try 1": 1}, check: attempts("flaky", 2),
	},
	{
		file: "retry-with-steps.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"retries so far: 1": 3, "retries so far: 0": 0},
		check: attempts("two-b", 2),
	},
	{file: "timeouts-workflow.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeRunTimeout},
	{
		file: "timeouts-step.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeAttemptTimeout,
		lines: map[string]int{"started": 1},
	},
	{
		file: "exit-handlers.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeExit,
		lines: map[string]int{"about to fail": 1, "it did not go well": 1, "it all went well": 0, " ended Failed, failures [": 1},
		nodes: map[string]apiv1.Phase{"celebrate": apiv1.PhaseSkipped, "mourn": apiv1.PhaseSucceeded},
	},
	{
		file: "exit-handler-dag-level.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"task A works": 1, "task D works": 1, "tidying up after a task": 4},
	},
	{
		file: "exit-handler-step-level.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"step one works": 1, "step two works": 1, "tidying up after a step": 2},
	},
	// A nodeSelector from a workflow parameter is refused: kiln sets a
	// pod's fields when it reads the workflow, before kiln run -p.
	{file: "node-selector.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].nodeSelector[kubernetes.io/arch]"},
	{
		file: "node-selector-literal.yaml", phase: apiv1.PhaseSucceeded,
		lines:   map[string]int{"asked for amd64": 1},
		ignored: "spec.templates[1].nodeSelector is ignored on the local backend",
	},
	{
		file: "pod-metadata.yaml", phase: apiv1.PhaseSucceeded,
		lines:   map[string]int{"a labelled pod": 1},
		ignored: "spec.templates[1].metadata is ignored on the local backend",
	},
	{
		file: "parallelism-limit.yaml", phase: apiv1.PhaseSucceeded, lines: map[string]int{"working": 5},
		ignored: "spec.parallelism is ignored on every backend",
	},
	{file: "map-reduce.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[2].inputs.artifacts[0]"},
	{file: "conditional-parameters.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].outputs.parameters[0].valueFrom"},
	// The entrypoint's outputs are the run's.
	{
		file: "conditional-parameters-parameter.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"says ": 1},
		check: func(t *testing.T, r argoRun) {
			flip := r.node("flip")
			var side string
			if o := r.run.Status.Outputs; o != nil {
				side = o.Parameters["side"]
			}
			if flip == nil || (side != "heads" && side != "tails") || side != flip.Outputs["result"] {
				t.Errorf("the run's output side is %q, want the flip's result (%+v)", side, flip)
			}
			if !strings.Contains(r.logs, "says "+side) {
				t.Errorf("the step of side %q did not run:\n%s", side, r.logs)
			}
		},
	},
	{file: "parameter-aggregation.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].steps[1][0].withParam"},
	{file: "retry-conditional.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[1].retryStrategy.expression"},
	{file: "input-artifact-s3.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].inputs.artifacts[0]"},
	{file: "sidecar.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].sidecars"},
	{file: "daemon-step.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[1].daemon"},
	{file: "k8s-jobs.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[0].resource"},
	{
		file: "input-artifact-raw.yaml", phase: apiv1.PhaseSucceeded,
		lines: map[string]int{"raw: first raw line": 1, "raw: second raw line": 1},
	},
	// As in Argo: D runs on B's failure, G does not run after E's; the run
	// fails.
	{
		file: "dag-continue-on-fail.yaml", phase: apiv1.PhaseFailed, code: apiv1.CodeExit,
		lines: map[string]int{"fine here": 4, "failing here": 2},
		nodes: map[string]apiv1.Phase{"d": apiv1.PhaseSucceeded, "g": apiv1.PhaseSkipped},
	},
	{file: "global-outputs.yaml", code: apiv1.CodeUnsupported, field: "spec.templates[2].container.args[0]"},
}

// TestArgoExamplesRunLocally runs each document of argoCases with kiln run
// on the local backend (the image ignored, the command run as a process)
// and checks how it ends: Succeeded with what it printed and passed on,
// Failed with the code Argo's failure maps to, or refused before anything
// runs with a code naming the field as written.
func TestArgoExamplesRunLocally(t *testing.T) {
	t.Parallel()
	dir := argoDir(t)
	for _, tc := range argoCases {
		name := strings.TrimSuffix(tc.file, ".yaml")
		if len(tc.params) > 0 {
			name += "/" + strings.Join(tc.params, ",")
		}
		t.Run(name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			t.Parallel()
			home := newHome(t)
			if tc.phase == "" {
				checkArgoRefused(t, home, dir, tc)
				return
			}
			r := runArgo(t, home, dir, tc.file, tc.params...)
			checkArgoRun(t, r, tc)
		})
	}
}

// checkArgoRefused checks that kiln validate and kiln run refuse tc's
// document with its code and field, and that no run is made.
func checkArgoRefused(t *testing.T, home, dir string, tc argoCase) {
	t.Helper()
	path := filepath.Join(dir, tc.file)
	for _, cmd := range []string{"validate", "run"} {
		r := kiln(t, home, cmd, path)
		if r.code == 0 || !strings.Contains(r.stderr, string(tc.code)+" "+path+":") || !strings.Contains(r.stderr, ": "+tc.field+":") {
			t.Errorf("kiln %s %s: exit %d\n%s%s\nwant a refusal %s naming %s", cmd, tc.file, r.code, r.stdout, r.stderr, tc.code, tc.field)
		}
	}
	if got := runs(t, home); len(got) != 0 {
		t.Errorf("a refused document left %d runs", len(got))
	}
}

// checkArgoRun checks r against what tc says of it.
func checkArgoRun(t *testing.T, r argoRun, tc argoCase) {
	t.Helper()
	st := r.run.Status
	if st.Phase != tc.phase || st.Code != tc.code {
		t.Fatalf("the run is %s %s (%s), want %s %s\n%s%s\n%s", st.Phase, st.Code, st.Message, tc.phase, tc.code, r.out.stdout, r.out.stderr, r.logs)
	}
	if want := tc.phase == apiv1.PhaseSucceeded; (r.out.code == 0) != want {
		t.Errorf("kiln run exited %d for a run that is %s", r.out.code, st.Phase)
	}
	for want, n := range tc.lines {
		if got := linesHolding(r.logs, want); got != n {
			t.Errorf("%d log lines hold %q, want %d\n%s", got, want, n, r.logs)
		}
	}
	for name, phase := range tc.nodes {
		if n := r.node(name); n == nil || n.Phase != phase {
			t.Errorf("task %s is %+v, want %s", name, n, phase)
		}
	}
	if tc.ignored != "" && !strings.Contains(r.out.stdout, tc.ignored) {
		t.Errorf("kiln run does not say %q:\n%s", tc.ignored, r.out.stdout)
	}
	if tc.check != nil {
		tc.check(t, r)
	}
}

// sameSideAsTheCoin checks that the step matching the flip's result ran and
// the other was skipped.
func sameSideAsTheCoin(t *testing.T, r argoRun) {
	side, ok := r.output("result")
	if !ok || (side != "heads" && side != "tails") {
		t.Fatalf("the flip's result is %q (%v)", side, ok)
	}
	other := map[string]string{"heads": "tails", "tails": "heads"}[side]
	if linesHolding(r.logs, "the coin landed "+side) != 1 || linesHolding(r.logs, "the coin landed "+other) != 0 {
		t.Errorf("the coin landed %s, but the logs say\n%s", side, r.logs)
	}
	if n := r.node(other); n == nil || n.Phase != apiv1.PhaseSkipped {
		t.Errorf("step %s is %+v, want Skipped", other, n)
	}
}

// outputIs checks that some task has the output parameter name with value.
func outputIs(name, value string) func(*testing.T, argoRun) {
	return func(t *testing.T, r argoRun) {
		if got, ok := r.output(name); !ok || got != value {
			t.Errorf("output %s is %q (%v), want %q", name, got, ok, value)
		}
	}
}

// pickedOneToHundred checks that the number a script printed (its result)
// reached the next step, and is in 1..100.
func pickedOneToHundred(prefix string) func(*testing.T, argoRun) {
	return func(t *testing.T, r argoRun) {
		m := regexp.MustCompile(regexp.QuoteMeta(prefix) + `(\d+)`).FindStringSubmatch(r.logs)
		result, _ := r.output("result")
		if m == nil || m[1] != result {
			t.Fatalf("the script's result %q did not reach the next step:\n%s", result, r.logs)
		}
		if n, err := strconv.Atoi(m[1]); err != nil || n < 1 || n > 100 {
			t.Errorf("the script picked %s, not a number in 1..100", m[1])
		}
	}
}

// attempts checks that task took n attempts.
func attempts(task string, n int) func(*testing.T, argoRun) {
	return func(t *testing.T, r argoRun) {
		if got := r.node(task); got == nil || len(got.Attempts) != n {
			t.Errorf("task %s: %+v, want %d attempts", task, got, n)
		}
	}
}

// TestArgoSuspendIsApprovedWithKilnApprove runs suspend-template.yaml: its
// suspend template without a duration waits until kiln approve (argo
// resume), the one with a duration for that long.
func TestArgoSuspendIsApprovedWithKilnApprove(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	cmd := startKiln(t, home, "run", "-q", filepath.Join(argoDir(t), "suspend-template.yaml"))
	waited := false
	t.Cleanup(func() { // the test failed before kiln run ended
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	id := newestRun(t, home)
	waitFor(t, "the approve step to wait for an approval", func() bool {
		n := argoRun{run: describe(t, home, id)}.node("approve")
		return n != nil && n.Phase == apiv1.PhaseRunning && strings.Contains(n.Message, "waiting for approval")
	})
	if r := kiln(t, home, "approve", string(id), "approve"); r.code != 0 {
		t.Fatalf("kiln approve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Errorf("kiln run: %v", err)
	}
	r := argoRun{run: describe(t, home, id), logs: kiln(t, home, "logs", string(id)).stdout}
	if r.run.Status.Phase != apiv1.PhaseSucceeded || linesHolding(r.logs, "a step around the gates") != 2 {
		t.Errorf("the run is %s; logs:\n%s", r.run.Status.Phase, r.logs)
	}
	if n := r.node("delay"); n == nil || n.Phase != apiv1.PhaseSucceeded {
		t.Errorf("the delay step is %+v, want Succeeded", n)
	}
}

// TestArgoSuppliedValueIsAKilnSignal runs suspend-template-outputs.yaml:
// the suspend template whose output is supplied on resume waits for kiln
// signal (argo resume with a value), and the next step reads the value.
func TestArgoSuppliedValueIsAKilnSignal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	cmd := startKiln(t, home, "run", "-q", filepath.Join(argoDir(t), "suspend-template-outputs.yaml"))
	waited := false
	t.Cleanup(func() {
		if !waited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	id := newestRun(t, home)
	waitFor(t, "the ask step to wait for a signal", func() bool {
		n := argoRun{run: describe(t, home, id)}.node("ask")
		return n != nil && n.Phase == apiv1.PhaseRunning && strings.Contains(n.Message, "waiting for")
	})
	if r := kiln(t, home, "signal", string(id), "ask", "ship it"); r.code != 0 {
		t.Fatalf("kiln signal: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Errorf("kiln run: %v", err)
	}
	r := argoRun{run: describe(t, home, id), logs: kiln(t, home, "logs", string(id)).stdout}
	if r.run.Status.Phase != apiv1.PhaseSucceeded || linesHolding(r.logs, "the word supplied: ship it") != 1 {
		t.Errorf("the run is %s; logs:\n%s", r.run.Status.Phase, r.logs)
	}
}

// TestArgoWorkflowTemplatesAreAppliedThenRun stores the WorkflowTemplates
// of workflow-templates.yaml with kiln apply (kubectl apply -f), then runs
// a Workflow that is a workflowTemplateRef to one of them and one whose
// DAG calls their templates by templateRef.
func TestArgoWorkflowTemplatesAreAppliedThenRun(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), argoDir(t)
	if r := kiln(t, home, "apply", "-f", filepath.Join(dir, "workflow-templates.yaml")); r.code != 0 {
		t.Fatalf("kiln apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	ref := runArgo(t, home, dir, "workflow-template-ref.yaml")
	if ref.run.Status.Phase != apiv1.PhaseSucceeded || linesHolding(ref.logs, "submittable says from the template's own arguments") != 1 {
		t.Errorf("workflow-template-ref.yaml: the run is %s\n%s%s\n%s", ref.run.Status.Phase, ref.out.stdout, ref.out.stderr, ref.logs)
	}
	other := newHome(t)
	if r := kiln(t, other, "apply", "-f", filepath.Join(dir, "workflow-templates.yaml")); r.code != 0 {
		t.Fatalf("kiln apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	dag := runArgo(t, other, dir, "workflow-template-dag.yaml")
	for want, n := range map[string]int{"stored template says A": 1, "stored template says inner-a": 1, "inner dag says inner-b": 1, "stored template says C": 1} {
		if got := linesHolding(dag.logs, want); got != n {
			t.Errorf("%d log lines hold %q, want %d\n%s", got, want, n, dag.logs)
		}
	}
	if dag.run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("workflow-template-dag.yaml: the run is %s (%s)", dag.run.Status.Phase, dag.run.Status.Message)
	}
}

// TestArgoWorkflowTemplateRefNeedsTheTemplate runs a workflowTemplateRef
// whose template was never applied: refused, naming the template.
func TestArgoWorkflowTemplateRefNeedsTheTemplate(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := kiln(t, home, "run", filepath.Join(argoDir(t), "workflow-template-ref.yaml"))
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-1025") || !strings.Contains(r.stderr, "stored-submittable") {
		t.Errorf("kiln run without the template: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := runs(t, home); len(got) != 0 {
		t.Errorf("a refused document left %d runs", len(got))
	}
}

// TestArgoMemoizeIsIgnored runs memoize-simple.yaml twice: kiln says it
// ignores memoize (it reuses no result by a key and a ConfigMap), and the
// second run computes the template again.
func TestArgoMemoizeIsIgnored(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), argoDir(t)
	first := runArgo(t, home, dir, "memoize-simple.yaml")
	if !strings.Contains(first.out.stdout, "spec.templates[0].memoize is ignored on every backend") {
		t.Errorf("kiln run does not say it ignores memoize:\n%s", first.out.stdout)
	}
	second := runArgo(t, home, dir, "memoize-simple.yaml")
	for i, r := range []argoRun{first, second} {
		if got, _ := r.output("word"); r.run.Status.Phase != apiv1.PhaseSucceeded || got != "remembered" {
			t.Errorf("run %d is %s with word %q", i+1, r.run.Status.Phase, got)
		}
		if n := linesHolding(r.logs, "computed for real"); n != 1 {
			t.Errorf("run %d did not compute:\n%s", i+1, r.logs)
		}
	}
}

// TestArgoConvertPrintsKilnsWorkflow converts Argo documents with kiln
// convert: the output is kiln's own Workflow, with what it ignores on
// standard error, which kiln validate accepts and kiln run runs as the
// Argo document runs.
func TestArgoConvertPrintsKilnsWorkflow(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), argoDir(t)
	r := kiln(t, home, "convert", "-f", filepath.Join(dir, "parallelism-limit.yaml"))
	if r.code != 0 || !strings.Contains(r.stdout, "kind: Workflow") || !strings.Contains(r.stderr, "spec.parallelism is ignored on every backend") {
		t.Fatalf("kiln convert parallelism-limit.yaml: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = kiln(t, home, "convert", "-f", filepath.Join(dir, "steps.yaml"))
	if r.code != 0 || !strings.Contains(r.stdout, "apiVersion: kiln.dev/v1alpha1") {
		t.Fatalf("kiln convert steps.yaml: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "spec.templates[1].container.image is ignored on the local backend") {
		t.Errorf("kiln convert does not warn of the ignored image:\n%s", r.stderr)
	}
	out := writeFile(t, dir, "converted.yaml", r.stdout)
	if v := kiln(t, home, "validate", out); v.code != 0 {
		t.Fatalf("kiln validate of the converted workflow: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	run := runArgo(t, home, dir, "converted.yaml")
	if run.run.Status.Phase != apiv1.PhaseSucceeded || linesHolding(run.logs, "the say template: step ") != 3 {
		t.Errorf("the converted workflow is %s\n%s", run.run.Status.Phase, run.logs)
	}
}
