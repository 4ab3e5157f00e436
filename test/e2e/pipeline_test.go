package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// nodeNamed returns the named node of run, failing the test if there is none.
func nodeNamed(t *testing.T, run apiv1.Run, name string) apiv1.NodeStatus {
	t.Helper()
	for _, n := range run.Status.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("run %s has no node %s", run.ID, name)
	return apiv1.NodeStatus{}
}

// sortedLines reads path's lines, sorted.
func sortedLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Fields(string(b))
	slices.Sort(out)
	return out
}

func TestMapRunsEachItemOnceThroughKillNineAndResume(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "map.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: fan}
spec:
  tasks:
  - name: list
    command: [sh, -c, 'echo "[{\"n\":\"a\"},{\"n\":\"b\"},{\"n\":\"c\"},{\"n\":\"d\"},{\"n\":\"e\"},{\"n\":\"f\"}]" > $KILN_OUTPUTS/items']
    outputs: {parameters: [{name: items}]}
  - name: each
    dependsOn: [list]
    forEach: {from: "{{tasks.list.outputs.parameters.items}}", maxParallel: 2}
    command: [sh, -c, 'echo {{item.n}}{{item.index}} >> `+ledger+`; sleep 0.4; echo up-{{item.n}} > $KILN_OUTPUTS/up']
    outputs: {parameters: [{name: up}]}
  - name: gather
    dependsOn: [each]
    env: [{name: UP, value: "{{tasks.each.outputs.parameters.up}}"}]
    command: [sh, -c, 'printf "%s\n" "$UP" > `+filepath.Join(dir, "gathered")+`']
`)
	first := startKiln(t, home, "run", wf)
	waitFor(t, "two items to start", func() bool { return lines(ledger) >= 2 })
	killNine(t, first)
	if r := kiln(t, home, "resume"); r.code != 0 {
		t.Fatalf("resume exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if got, want := sortedLines(t, ledger), []string{"a0", "b1", "c2", "d3", "e4", "f5"}; !slices.Equal(got, want) {
		t.Errorf("items ran %v, want each once: %v", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "gathered"))
	if got := strings.TrimSpace(string(b)); got != `["up-a","up-b","up-c","up-d","up-e","up-f"]` {
		t.Errorf("downstream read %s, want the items' outputs in item order", got)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	each := nodeNamed(t, run, "each")
	if run.Status.Phase != apiv1.PhaseSucceeded || each.Kind != apiv1.NodeKindMap || each.Children == nil ||
		each.Children.Total != 6 || each.Children.Succeeded != 6 {
		t.Errorf("run %s, map node %+v children %+v; want Succeeded, a map of 6 succeeded items", run.Status.Phase, each.Phase, each.Children)
	}
	if c := nodeNamed(t, run, "each.4"); c.Parent != "each" || c.Outputs["up"] != "up-e" {
		t.Errorf("child each.4 = parent %q outputs %v, want parent each and up=up-e", c.Parent, c.Outputs)
	}
}

func TestMapSuccessPolicyAndANonListFailure(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	wf := writeFile(t, dir, "policy.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: policy}
spec:
  failFast: false
  params: [{name: list, default: "not a list at all"}]
  tasks:
  - name: most
    forEach: {range: {start: 1, end: 5}, minSuccessRatio: 0.8}
    command: [sh, -c, 'test {{item}} -ne 3']
  - name: all
    forEach: {items: [x, w, z]}
    command: [sh, -c, 'test {{item}} != w']
  - name: bad
    forEach: {from: "{{params.list}}"}
    command: ["true"]
`)
	r := kiln(t, home, "run", wf)
	if r.code == 0 {
		t.Fatalf("run succeeded; want it to fail (map all, map over a non-list)")
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if most := nodeNamed(t, run, "most"); most.Phase != apiv1.PhaseSucceeded || most.Children.Failed != 1 || most.Children.Succeeded != 4 {
		t.Errorf("most = %s %+v; want Succeeded with 4 of 5 (minSuccessRatio 0.8)", most.Phase, most.Children)
	}
	if all := nodeNamed(t, run, "all"); all.Phase != apiv1.PhaseFailed || all.Code != apiv1.CodeTooFewSucceeded || !strings.Contains(all.Message, "all.1") {
		t.Errorf("all = %s %s %q; want Failed KLN-3017 naming all.1", all.Phase, all.Code, all.Message)
	}
	if bad := nodeNamed(t, run, "bad"); bad.Phase != apiv1.PhaseFailed || bad.Code != apiv1.CodeNotAList || !strings.Contains(bad.Message, `"not a list at all"`) {
		t.Errorf("bad = %s %s %q; want Failed KLN-3012 quoting the value", bad.Phase, bad.Code, bad.Message)
	}
}

func TestDynamicFragmentRunsOnceThroughKillNineAndResume(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	frag := writeFile(t, dir, "frag.yaml", `tasks:
- name: one
  command: [sh, -c, 'echo one >> `+ledger+`; sleep 0.5']
- name: two
  dependsOn: [one]
  command: [sh, -c, 'echo two >> `+ledger+`; echo 42 > $KILN_OUTPUTS/answer']
  outputs: {parameters: [{name: answer}]}
outputs:
  parameters: [{name: answer, value: "{{tasks.two.outputs.parameters.answer}}"}]
`)
	wf := writeFile(t, dir, "dyn.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: dyn}
spec:
  tasks:
  - name: gen
    command: [sh, -c, 'cp `+frag+` $KILN_OUTPUTS/fragment']
    outputs: {parameters: [{name: fragment}, {name: answer}]}
    dynamic: {output: fragment}
  - name: use
    dependsOn: [gen]
    command: [sh, -c, 'echo got-{{tasks.gen.outputs.parameters.answer}} >> `+ledger+`']
`)
	first := startKiln(t, home, "run", wf)
	waitFor(t, "the fragment's first task", func() bool { return lines(ledger) >= 1 })
	killNine(t, first)
	if r := kiln(t, home, "resume"); r.code != 0 {
		t.Fatalf("resume exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(ledger); string(b) != "one\ntwo\ngot-42\n" {
		t.Errorf("ledger = %q, want each fragment task once, then the dependent with the fragment's output", b)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if gen := nodeNamed(t, run, "gen"); gen.Phase != apiv1.PhaseSucceeded || gen.Children.Total != 2 || len(nodeNamed(t, run, "gen.two").Attempts) != 1 {
		t.Errorf("gen = %s %+v; want Succeeded with 2 children, each run once", gen.Phase, gen.Children)
	}
}

func TestABadFragmentFailsTheNodeWithItsProblems(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	wf := writeFile(t, dir, "cycle.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: cyc}
spec:
  tasks:
  - name: gen
    command: [sh, -c, 'printf "tasks:\n- name: a\n  dependsOn: [b]\n  command: [\"true\"]\n- name: b\n  dependsOn: [a]\n  command: [\"true\"]\n" > $KILN_OUTPUTS/f']
    outputs: {parameters: [{name: f}]}
    dynamic: {output: f}
`)
	if r := kiln(t, home, "run", wf); r.code == 0 {
		t.Fatal("a run whose fragment has a cycle succeeded")
	}
	gen := nodeNamed(t, describe(t, home, runs(t, home)[0].ID), "gen")
	if gen.Phase != apiv1.PhaseFailed || gen.Code != apiv1.CodeFragment || !strings.Contains(gen.Message, "a -> b -> a") {
		t.Errorf("gen = %s %s %q; want Failed KLN-3013 printing the cycle", gen.Phase, gen.Code, gen.Message)
	}
}

func TestGateWaitsThroughKillNineAndResume(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "gate.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: gated}
spec:
  tasks:
  - name: train
    command: [sh, -c, 'echo train >> `+ledger+`']
  - name: ship
    dependsOn: [train]
    gate: {approve: {message: "ship the model?"}}
  - name: rate
    dependsOn: [ship]
    gate: {signal: {type: float}}
  - name: deploy
    dependsOn: [rate]
    command: [sh, -c, 'echo deploy-{{tasks.rate.outputs.parameters.value}} >> `+ledger+`']
`)
	first := startKiln(t, home, "run", wf)
	var id apiv1.RunID
	waitFor(t, "the gate to wait", func() bool {
		rs := runs(t, home)
		if len(rs) == 0 {
			return false
		}
		id = rs[0].ID
		g := nodeNamed(t, describe(t, home, id), "ship")
		return g.Phase == apiv1.PhaseRunning && g.Gate != nil
	})
	killNine(t, first)
	if r := kiln(t, home, "signal", string(id), "ship", "1"); r.code == 0 || !strings.Contains(r.stderr, "KLN-4014") {
		t.Errorf("a value sent to an approval gate: exit %d %q, want KLN-4014", r.code, r.stderr)
	}
	if r := kiln(t, home, "approve", string(id), "ship", "--reason", "metrics ok"); r.code != 0 {
		t.Fatalf("approve with no engine running: %s", r.stderr)
	}
	if r := kiln(t, home, "reject", string(id), "ship"); r.code == 0 || !strings.Contains(r.stderr, "already approved") {
		t.Errorf("a second decision before the first was applied: exit %d %q; want a refusal naming the first", r.code, r.stderr)
	}
	resumed := startKiln(t, home, "resume")
	waitFor(t, "the signal gate to wait", func() bool {
		g := nodeNamed(t, describe(t, home, id), "rate")
		return g.Phase == apiv1.PhaseRunning && g.Gate != nil
	})
	if r := kiln(t, home, "signal", string(id), "rate", "fast"); r.code == 0 || !strings.Contains(r.stderr, "not a float") {
		t.Errorf("a word sent to a float gate: exit %d %q, want a refusal saying it is not a float", r.code, r.stderr)
	}
	if r := kiln(t, home, "signal", string(id), "rate", "0.01"); r.code != 0 {
		t.Fatalf("signal: %s", r.stderr)
	}
	if err := resumed.Wait(); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if b, _ := os.ReadFile(ledger); string(b) != "train\ndeploy-0.01\n" {
		t.Errorf("ledger = %q, want train once, then deploy with the signalled value", b)
	}
	run := describe(t, home, id)
	ship := nodeNamed(t, run, "ship").Gate
	if run.Status.Phase != apiv1.PhaseSucceeded || ship.Decision != "approved" || ship.Reason != "metrics ok" || ship.By == "" || ship.At == nil {
		t.Errorf("run %s, gate %+v; want Succeeded and the approval recorded with who, when and why", run.Status.Phase, ship)
	}
}

func TestTriggerRulesConditionsAndExitHandlers(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	out := filepath.Join(dir, "out")
	wf := writeFile(t, dir, "rules.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: rules}
spec:
  tasks:
  - name: train
    command: [sh, -c, 'exit 4']
  - name: slow
    command: [sh, -c, 'sleep 0.3']
  - name: report
    dependsOn: [train, slow]
    trigger: allDone
    command: [sh, -c, 'echo report >> `+out+`']
  - name: cleanup
    depends: "train.Failed"
    command: [sh, -c, 'echo cleanup >> `+out+`']
  - name: evaluate
    dependsOn: [train]
    command: [sh, -c, 'echo never >> `+out+`']
  - name: quick
    when: 'params.x == "never"'
    command: [sh, -c, 'echo never >> `+out+`']
  - name: after-quick
    dependsOn: [quick]
    trigger: noneFailed
    command: [sh, -c, 'echo after-quick >> `+out+`']
  params: [{name: x, default: "y"}]
  onExit:
  - name: notify
    env: [{name: F, value: "{{workflow.status}} {{workflow.failures}}"}]
    command: [sh, -c, 'printf "%s\n" "$F" >> `+out+`']
`)
	if r := kiln(t, home, "run", wf); r.code == 0 {
		t.Fatal("the run succeeded; its train task fails")
	}
	got := sortedLines(t, out)
	text := strings.Join(got, " ")
	for _, want := range []string{"report", "cleanup", "after-quick", "Failed", `"name":"train"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the tasks wrote %q; want %q among it", text, want)
		}
	}
	if strings.Contains(text, "never") {
		t.Errorf("a task that must not run ran: %q", text)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if e := nodeNamed(t, run, "evaluate"); e.Phase != apiv1.PhaseSkipped || e.Code != apiv1.CodeUpstreamFailed {
		t.Errorf("evaluate = %s %s, want Skipped KLN-3008", e.Phase, e.Code)
	}
	if q := nodeNamed(t, run, "quick"); q.Phase != apiv1.PhaseSkipped || !strings.Contains(q.Message, "condition") {
		t.Errorf("quick = %s %q, want Skipped by its condition", q.Phase, q.Message)
	}
	if run.Status.Phase != apiv1.PhaseFailed || nodeNamed(t, run, "onExit.notify").Phase != apiv1.PhaseSucceeded {
		t.Errorf("run %s, want Failed with its exit handler run", run.Status.Phase)
	}
}

func TestSubworkflowRunsAsOneNodeAndRecursionIsRefused(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	out := filepath.Join(dir, "out")
	wf := writeFile(t, dir, "sub.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: main}
spec:
  tasks:
  - name: prep
    command: [sh, -c, 'echo 7 > $KILN_OUTPUTS/num']
    outputs: {parameters: [{name: num}]}
  - name: eval
    dependsOn: [prep]
    workflow:
      name: evaluate
      params: [{name: num, value: "{{tasks.prep.outputs.parameters.num}}"}]
  - name: show
    dependsOn: [eval]
    command: [sh, -c, 'echo score-{{tasks.eval.outputs.parameters.score}} >> `+out+`']
  outputs:
    parameters: [{name: score, value: "{{tasks.eval.outputs.parameters.score}}"}]
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: evaluate}
spec:
  params: [{name: num}]
  tasks:
  - name: score
    command: [sh, -c, 'echo $(({{params.num}} * 6)) > $KILN_OUTPUTS/s']
    outputs: {parameters: [{name: s}]}
  outputs:
    parameters: [{name: score, value: "{{tasks.score.outputs.parameters.s}}"}]
`)
	if r := kiln(t, home, "run", wf); r.code != 0 {
		t.Fatalf("run exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "score-42\n" {
		t.Errorf("out = %q, want score-42 from the subworkflow's output", b)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if ev := nodeNamed(t, run, "eval"); ev.Kind != apiv1.NodeKindSubworkflow || ev.Children.Succeeded != 1 || nodeNamed(t, run, "eval.score").Parent != "eval" {
		t.Errorf("eval = %s %+v; want a subworkflow node with its child eval.score", ev.Kind, ev.Children)
	}
	if run.Status.Outputs == nil || run.Status.Outputs.Parameters["score"] != "42" {
		t.Errorf("run outputs = %+v, want score=42", run.Status.Outputs)
	}

	loop := writeFile(t, dir, "loop.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: top}
spec:
  tasks: [{name: go, workflow: {name: ping}}]
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: ping}
spec:
  tasks: [{name: back, workflow: {name: pong}}]
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: pong}
spec:
  tasks: [{name: again, workflow: {name: ping}}]
`)
	r := kiln(t, home, "validate", loop)
	if r.code == 0 || !strings.Contains(r.stderr, "KLN-1025") || !strings.Contains(r.stderr, "ping -> pong -> ping") {
		t.Errorf("validate of recursive workflows: exit %d %q; want KLN-1025 printing the cycle", r.code, r.stderr)
	}
	if n := len(runs(t, home)); n != 1 {
		t.Errorf("%d runs after the refusal, want 1: nothing is created", n)
	}
}

func TestBadExpressionsAreRefusedAtSubmit(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	wf := writeFile(t, dir, "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: bad}
spec:
  tasks:
  - name: a
    command: ["true"]
  - name: b
    dependsOn: [a]
    when: 'tasks.a.phase > 3'
    command: ["true"]
  - name: c
    when: 'tasks.a.succeeded'
    command: ["true"]
  - name: d
    depends: "a.Exploded"
    command: ["true"]
  - name: e
    gate: {sleep: {duration: soon}}
  - name: f
    forEach: {items: [1], range: {count: 2}}
    command: ["true"]
`)
	r := kiln(t, home, "run", wf)
	for _, want := range []string{
		"spec.tasks[1].when", "KLN-1024", "spec.tasks[2].when", "does not depend on",
		"spec.tasks[3].depends", "Exploded", "spec.tasks[4].gate.sleep.duration", "KLN-1009",
		"spec.tasks[5].forEach", "exactly one of items, range and from",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("errors lack %q:\n%s", want, r.stderr)
		}
	}
	if r.code == 0 || len(runs(t, home)) != 0 {
		t.Errorf("exit %d with %d runs; want a refusal and no run", r.code, len(runs(t, home)))
	}
}

func TestAMapOfTrainingJobsRunsEachAsAGang(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "sweep.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: sweep}
spec:
  tasks:
  - name: train
    forEach: {items: ["0.1", "0.01"]}
    train:
      runtime: plain
      numNodes: 2
      resourcesPerNode: {cpu: 100m}
      command: [sh, -c, 'echo lr={{item}} >> `+ledger+`; echo {{item}} > $KILN_OUTPUTS/lr']
    outputs: {parameters: [{name: lr}]}
`)
	if r := kiln(t, home, "run", wf); r.code != 0 {
		t.Fatalf("run exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if got, want := sortedLines(t, ledger), []string{"lr=0.01", "lr=0.01", "lr=0.1", "lr=0.1"}; !slices.Equal(got, want) {
		t.Errorf("processes wrote %v, want two per item: each item is a gang of two", got)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	for _, name := range []string{"train.0", "train.1"} {
		if c := nodeNamed(t, run, name); c.Kind != apiv1.NodeKindTrain || c.Phase != apiv1.PhaseSucceeded || len(c.Conditions) == 0 {
			t.Errorf("%s = %s %s, conditions %v; want a succeeded training job with its conditions", name, c.Kind, c.Phase, c.Conditions)
		}
	}
	if got := nodeNamed(t, run, "train").Outputs["lr"]; got != `["0.1","0.01"]` {
		t.Errorf("the sweep's gathered lr = %s, want the items' in order", got)
	}
}

func TestRetryOfAMapRunsOnlyTheItemsThatFailed(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger, fixed := filepath.Join(dir, "ledger"), filepath.Join(dir, "fixed")
	wf := writeFile(t, dir, "retry.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: again}
spec:
  tasks:
  - name: each
    forEach: {items: [a, b, c]}
    command: [sh, -c, 'echo {{item}} >> `+ledger+`; test {{item}} != b || test -e `+fixed+`']
  - name: after
    dependsOn: [each]
    command: [sh, -c, 'echo after >> `+ledger+`']
`)
	if r := kiln(t, home, "run", wf); r.code == 0 {
		t.Fatal("the first try succeeded; item b fails until fixed")
	}
	writeFile(t, dir, "fixed", "")
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "retry", string(id)); r.code != 0 {
		t.Fatalf("retry exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if got, want := sortedLines(t, ledger), []string{"a", "after", "b", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("ran %v, want a and c once, b twice, then after", got)
	}
	run := describe(t, home, id)
	if b := nodeNamed(t, run, "each.1"); run.Status.Phase != apiv1.PhaseSucceeded || len(b.Attempts) != 2 {
		t.Errorf("run %s, each.1 has %d attempts; want Succeeded and both of b's attempts kept", run.Status.Phase, len(b.Attempts))
	}
}

func TestExitHandlerRunsOnceThroughKillNineAndResume(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "exit.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: bye}
spec:
  tasks:
  - name: work
    command: [sh, -c, 'echo work >> `+ledger+`']
  onExit:
  - name: first
    command: [sh, -c, 'echo first >> `+ledger+`; sleep 0.5']
  - name: second
    dependsOn: [first]
    command: [sh, -c, 'echo second-{{workflow.status}} >> `+ledger+`']
`)
	cmd := startKiln(t, home, "run", wf)
	waitFor(t, "the exit handler to start", func() bool { return lines(ledger) >= 2 })
	killNine(t, cmd)
	if r := kiln(t, home, "resume"); r.code != 0 {
		t.Fatalf("resume exited %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if b, _ := os.ReadFile(ledger); string(b) != "work\nfirst\nsecond-Succeeded\n" {
		t.Errorf("ledger = %q, want each task once, the exit tasks after the work", b)
	}
}

func TestAMapsConditionOnItemsFiltersThemAndAStoppedMapIsSkipped(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "filter.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: filter}
spec:
  tasks:
  - name: even
    forEach: {items: [1, 2, 3, 4]}
    when: 'item % 2 == 0'
    command: [sh, -c, 'echo {{item}} >> `+ledger+`']
  - name: fail
    dependsOn: [even]
    command: ["false"]
  - name: later
    dependsOn: [fail]
    trigger: allDone
    forEach: {items: [a, b]}
    command: ["true"]
  - name: cut
    forEach: {items: [a, b], maxParallel: 1}
    command: [sleep, "1"]
`)
	kiln(t, home, "run", wf)
	if got := sortedLines(t, ledger); !slices.Equal(got, []string{"2", "4"}) {
		t.Errorf("items ran %v, want 2 and 4: the condition is each item's", got)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if e := nodeNamed(t, run, "even"); e.Phase != apiv1.PhaseSucceeded || e.Children.SkippedByCondition != 2 {
		t.Errorf("even = %s %+v; want Succeeded with 2 items skipped by their condition", e.Phase, e.Children)
	}
	if c := nodeNamed(t, run, "cut"); c.Phase != apiv1.PhaseSkipped || c.Children.Succeeded != 1 || c.Children.Skipped != 1 {
		t.Errorf("cut = %s %q %+v; want Skipped, its first item run and its second left by failFast", c.Phase, c.Message, c.Children)
	}
	if run.Status.Phase != apiv1.PhaseFailed || !strings.Contains(run.Status.Message, "task fail failed") || strings.Contains(run.Status.Message, "cut") {
		t.Errorf("run %s %q; want Failed for task fail alone", run.Status.Phase, run.Status.Message)
	}
}
