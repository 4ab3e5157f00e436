package controller

import (
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestAMapRunsNoMoreItemsAtOnceThanItsCap(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 8)
	id := e.submit(t, `spec:
  tasks:
  - name: each
    forEach: {range: {count: 6}, maxParallel: 2}
    command: [sleep, "0.2"]
`, nil)
	run := e.wait(t, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
	}
	type span struct{ from, to time.Time }
	var spans []span
	for _, n := range run.Status.Nodes {
		if n.Parent == "each" {
			a := n.Attempts[0]
			spans = append(spans, span{*a.StartedAt, *a.FinishedAt})
		}
	}
	if len(spans) != 6 {
		t.Fatalf("%d items ran, want 6", len(spans))
	}
	for _, s := range spans {
		at := s.from.Add(time.Millisecond)
		running := 0
		for _, o := range spans {
			if !at.Before(o.from) && at.Before(o.to) {
				running++
			}
		}
		if running > 2 {
			t.Errorf("%d items ran at %s; maxParallel is 2", running, at.Format(time.StampMilli))
		}
	}
}

func TestAMapThatCannotSucceedStartsNoMoreItems(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 4)
	id := e.submit(t, `spec:
  tasks:
  - name: each
    forEach: {items: [a, b, c, d], maxParallel: 1}
    command: ["false"]
  - name: after
    dependsOn: [each]
    command: ["true"]
`, nil)
	run := e.wait(t, id)
	ph := phases(run)
	if ph["each.0"] != apiv1.PhaseFailed || ph["each"] != apiv1.PhaseFailed || ph["after"] != apiv1.PhaseSkipped {
		t.Errorf("phases %v; want the first item and the map Failed, the dependent Skipped", ph)
	}
	for _, name := range []string{"each.1", "each.2", "each.3"} {
		if n := nodeOf(run, name); n.Phase != apiv1.PhaseSkipped || len(n.Attempts) != 0 || !strings.Contains(n.Message, "can no longer succeed") {
			t.Errorf("%s = %s with %d attempts (%q); want Skipped, never started, as the map cannot succeed", name, n.Phase, len(n.Attempts), n.Message)
		}
	}
	if m := nodeOf(run, "each"); m.Code != apiv1.CodeTooFewSucceeded || m.Children.Failed != 1 || m.Children.Skipped != 3 {
		t.Errorf("map = %s %+v, want KLN-3017 with 1 failed and 3 skipped", m.Code, m.Children)
	}
}

func TestGatesTimeOutAsTheySayAndTriggerRulesReadSkips(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 4)
	id := e.submit(t, `spec:
  tasks:
  - name: outer
    forEach: {items: [x, w]}
    command: [sh, -c, 'echo {{item}}-{{item.index}} > $KILN_OUTPUTS/v']
    outputs: {parameters: [{name: v}]}
  - name: gate
    dependsOn: [outer]
    gate: {sleep: {duration: 10ms}, timeout: 1h}
  - name: late
    dependsOn: [gate]
    gate: {approve: {}, timeout: 50ms, onTimeout: skip}
  - name: never
    dependsOn: [late]
    command: ["true"]
  - name: anyway
    dependsOn: [late]
    trigger: noneFailed
    env: [{name: V, value: "{{tasks.outer.outputs.parameters.v}}"}]
    command: [sh, -c, 'test "$V" = ''["x-0","w-1"]''']
`, nil)
	run := e.wait(t, id)
	ph := phases(run)
	want := map[string]apiv1.Phase{
		"": apiv1.PhaseSucceeded, "outer.0": apiv1.PhaseSucceeded, "outer.1": apiv1.PhaseSucceeded,
		"gate": apiv1.PhaseSucceeded, "late": apiv1.PhaseSkipped, "never": apiv1.PhaseSkipped, "anyway": apiv1.PhaseSucceeded,
	}
	for name, p := range want {
		if ph[name] != p {
			t.Errorf("%q is %s (%s), want %s (all: %v)", name, ph[name], nodeOf(run, name).Message, p, ph)
		}
	}
	if g := nodeOf(run, "late").Gate; g == nil || g.Decision != "timedOut" {
		t.Errorf("late's gate = %+v, want timedOut", g)
	}
}
