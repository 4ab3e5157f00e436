package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// fanOutWorkflow is a run with a 30-task static fan-out (fan-00 skipped
// by its condition, the others reading prep's output and a parameter), a
// map with one failed item of three, and a gate whose message reads a
// parameter and an output, with a task after it that stays Pending.
func fanOutWorkflow() string {
	var b strings.Builder
	b.WriteString(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: fan}
spec:
  params: [{name: model, default: resnet}]
  tasks:
  - name: prep
    command: [sh, -c, 'printf 42 > $KILN_OUTPUTS/count']
    outputs: {parameters: [{name: count}]}
  - name: each
    forEach: {items: [a, b, c], minSuccesses: 2}
    command: [sh, -c, 'test "{{item}}" != b']
  - name: ship
    dependsOn: [prep]
    gate: {approve: {message: "ship {{params.model}} with count={{tasks.prep.outputs.parameters.count}}?"}}
  - name: after
    dependsOn: [ship]
    command: ["true"]
`)
	for i := range 30 {
		fmt.Fprintf(&b, "  - name: fan-%02d\n    dependsOn: [prep]\n", i)
		if i == 0 {
			b.WriteString("    when: 'params.model == \"never\"'\n")
		}
		fmt.Fprintf(&b, "    command: [sh, -c, 'echo -n \"$0-$1\" > $KILN_OUTPUTS/said', '{{tasks.prep.outputs.parameters.count}}', '{{params.model}}']\n")
		b.WriteString("    outputs: {parameters: [{name: said}]}\n")
	}
	return b.String()
}

// TestWebUIShowsATasksPanelBesideAWideGraph drives a run with a 30-task
// fan-out through the web UI: the row folds into its first 8 tasks and a
// "+22 more" node that opens and folds it again, readable after Fit; each
// phase has its own colour, in a legend; a gate's message is shown
// resolved; a map's counts agree wherever they are shown; and a task's
// panel, fixed at the right and in view wherever the page is scrolled,
// shows its parameters, inputs and outputs as the API records them.
func TestWebUIShowsATasksPanelBesideAWideGraph(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, fanOutWorkflow())
	waitAPIRun(t, base, admin, run.ID, "the fan-out to end and the gate to wait", func(r apiv1.Run) bool {
		done := 0
		for _, n := range r.Status.Nodes {
			if strings.HasPrefix(n.Name, "fan-") && n.Phase.Done() {
				done++
			}
		}
		return done == 30 && nodeOf(t, &r, "ship").Phase == apiv1.PhaseRunning && nodeOf(t, &r, "each").Phase.Done()
	})

	var fanShown, fanOpen, fanRefolded, shownPending, shownSkipped int
	var rowLabel, openLabel, message, eachNode, eachTip, panelCounts, params, inputs, outputs string
	var zoom float64
	var legend []string
	var fills map[string]string
	var inView, inViewScrolled, beside bool
	fans := `document.querySelectorAll('g.node[data-name^="fan-"]').length`
	inViewJS := `(() => { const r = document.getElementById("panel").getBoundingClientRect();
		return getComputedStyle(document.getElementById("panel")).position === "fixed" && r.top >= 0 && r.right <= innerWidth + 1 &&
			r.bottom <= innerHeight + 1 && r.height > 200; })()`
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)),
		waitJS(node("ship", "Running")+` && document.querySelector("section.gate.waiting .message") !== null`),
		chromedp.Text(`section.gate.waiting[data-gate="ship"] .message`, &message),
		chromedp.Evaluate(fans, &fanShown),
		chromedp.TextContent(`g.more.row`, &rowLabel),
		chromedp.Evaluate(`document.querySelectorAll('g.node[data-phase="Pending"]').length`, &shownPending),
		chromedp.Evaluate(`document.querySelectorAll('g.node[data-phase="Skipped"]').length`, &shownSkipped),
		chromedp.Evaluate(`Object.fromEntries(["Pending", "Skipped", "Succeeded", "Running"].map((p) =>
			[p, document.querySelector('g.node[data-phase="' + p + '"] rect.box').getAttribute("fill")]))`, &fills),
		chromedp.Evaluate(`[...document.querySelectorAll(".kg-legend [data-phase]")].map((e) => e.dataset.phase + "=" + getComputedStyle(e.querySelector(".swatch")).backgroundColor)`, &legend),
		chromedp.Click(`.kg-fit`),
		chromedp.Evaluate(`+document.getElementById("dag").dataset.zoom`, &zoom),
		shot(t, "kiln-ui-fanout-folded.png"),
		chromedp.Click(`g.more.row rect`),
		waitJS(fans+` === 30`),
		chromedp.Evaluate(fans, &fanOpen),
		chromedp.TextContent(`g.more.row`, &openLabel),
		shot(t, "kiln-ui-fanout-open.png"),
		chromedp.Click(`g.more.row rect`),
		waitJS(fans+` === 8`),
		chromedp.Evaluate(fans, &fanRefolded),

		chromedp.Evaluate(`document.querySelector('g.node[data-name="each"]').textContent`, &eachNode),
		chromedp.Click(`g.node[data-name="each"] rect`),
		waitJS(`document.querySelector('#panel[data-node="each"] h4') !== null`),
		chromedp.Text(`#panel[data-node="each"] h4`, &panelCounts),
		chromedp.Evaluate(`(() => { const g = document.querySelector('g.node[data-name="each"] rect.box');
			const r = g.getBoundingClientRect();
			g.dispatchEvent(new PointerEvent("pointermove", { bubbles: true, clientX: r.x + 5, clientY: r.y + 5 }));
			const tip = document.querySelector(".kg-tip").textContent;
			g.dispatchEvent(new PointerEvent("pointerleave", { bubbles: true }));
			return tip; })()`, &eachTip),

		chromedp.Click(`g.node[data-name="fan-01"] rect`),
		waitJS(`document.querySelector('#panel[data-node="fan-01"] #io-outputs') !== null`),
		chromedp.Evaluate(inViewJS, &inView),
		chromedp.Evaluate(`document.getElementById("graph").getBoundingClientRect().right <= document.getElementById("panel").getBoundingClientRect().left + 1`, &beside),
		chromedp.Text(`#panel #io-params`, &params),
		chromedp.Text(`#panel #io-inputs`, &inputs),
		chromedp.Text(`#panel #io-outputs`, &outputs),
		viewShot(t, "kiln-ui-panel.png"),
		chromedp.Evaluate(`window.scrollTo(0, document.body.scrollHeight)`, nil),
		chromedp.Evaluate(inViewJS, &inViewScrolled),
		viewShot(t, "kiln-ui-panel-scrolled.png"),
	)

	if !strings.Contains(message, "ship resnet with count=42?") || strings.Contains(message, "{{") {
		t.Errorf("the gate's message reads %q, want its references resolved", message)
	}
	if fanShown != 8 || !strings.HasPrefix(rowLabel, "+22 more") || fanOpen != 30 || !strings.HasPrefix(openLabel, "− fold 22") || fanRefolded != 8 {
		t.Errorf("the fan-out shows %d tasks and %q, opened %d and %q, folded again %d; want 8 and +22 more, 30 and − fold 22, 8",
			fanShown, rowLabel, fanOpen, openLabel, fanRefolded)
	}
	if zoom < 0.6 {
		t.Errorf("after Fit the folded fan-out is drawn at %.2f of its size: too small to read", zoom)
	}
	if shownPending == 0 || shownSkipped == 0 || fills["Pending"] == fills["Skipped"] || len(dedupe(mapValues(fills))) != len(fills) {
		t.Errorf("the phases' fills are %v (%d pending, %d skipped shown); want a colour each", fills, shownPending, shownSkipped)
	}
	colours := map[string]bool{}
	for _, l := range legend {
		_, c, _ := strings.Cut(l, "=")
		colours[c] = true
	}
	if len(legend) != 9 || len(colours) != 9 {
		t.Errorf("the legend reads %v; want the 9 phases, each its own colour", legend)
	}

	got, _ := apiRun(t, base, admin, run.ID)
	c := nodeOf(t, &got, "each").Children
	if c == nil || c.Total != 3 || c.Succeeded != 2 || c.Failed != 1 {
		t.Fatalf("the API counts the map's children %+v, want 2 of 3 succeeded, 1 failed", c)
	}
	if eachNode != "each2/3 ✓ 1 ✗" || panelCounts != "Children: 2/3 succeeded, 1 failed" || !strings.HasSuffix(eachTip, "2/3 succeeded, 1 failed") {
		t.Errorf("the map's counts read %q on its node, %q in its panel and %q in its tooltip; want 2/3 succeeded, 1 failed in each",
			eachNode, panelCounts, eachTip)
	}

	if !inView || !inViewScrolled || !beside {
		t.Errorf("the panel is in view %v, after scrolling %v, beside the graph %v; want it fixed at the right, always in view", inView, inViewScrolled, beside)
	}
	fan := nodeOf(t, &got, "fan-01")
	if want := map[string]string{"params.model": "resnet", "tasks.prep.outputs.parameters.count": "42"}; fmt.Sprint(fan.Inputs) != fmt.Sprint(want) {
		t.Errorf("the API records fan-01's inputs as %v, want %v", fan.Inputs, want)
	}
	if params != "Parameters\nparams.model\t\nresnet" || inputs != "Inputs\ntasks.prep.outputs.parameters.count\t\n42" || outputs != "Outputs\nsaid\t\n42-resnet" {
		t.Errorf("fan-01's panel reads %q, %q and %q; want its parameter, its input and its output", params, inputs, outputs)
	}
}

// mapValues is m's values.
func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
