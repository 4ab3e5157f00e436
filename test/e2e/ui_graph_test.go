package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// graphTiming is what timeGraph measured in the browser, in milliseconds.
type graphTiming struct {
	Fetch   float64 `json:"fetch"`   // the run's JSON fetched and parsed
	Update  float64 `json:"update"`  // KilnGraph's create and first update: model, layout, DOM
	Paint   float64 `json:"paint"`   // from the JSON in hand to the frame after the drawing painted
	Restyle float64 `json:"restyle"` // a second update with the same nodes
	Expand  float64 `json:"expand"`  // opening the map named, if one was
	Nodes   int     `json:"nodes"`   // g.node elements drawn at first
	Opened  int     `json:"opened"`  // and once the map was opened
}

// timeGraph draws run id afresh in the page with KilnGraph, off the page's
// own drawing, and measures it; it opens map open if that is not "".
func timeGraph(ctx context.Context, t *testing.T, id apiv1.RunID, open string) graphTiming {
	t.Helper()
	script := `(async () => {
  const t0 = performance.now();
  const r = await fetch("/api/v1/runs/` + string(id) + `", { headers: { Authorization: "Bearer " + localStorage.getItem("kiln-token") } });
  const run = await r.json();
  const t1 = performance.now();
  const box = document.createElement("div");
  box.style.width = "1000px";
  document.body.append(box);
  KilnGraph.forget(); // the page's own drawing laid this run out: lay it out afresh
  const g = KilnGraph.create(box, {});
  g.update(run);
  const t2 = performance.now();
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  const t3 = performance.now();
  g.update(run);
  const t4 = performance.now();
  const nodes = box.querySelectorAll("g.node").length;
  let expand = 0, opened = 0;
  if (` + strconv.Quote(open) + `) {
    const t5 = performance.now();
    g.expand(` + strconv.Quote(open) + `, true);
    expand = performance.now() - t5;
    opened = box.querySelectorAll("g.node").length;
  }
  g.destroy();
  box.remove();
  return { fetch: t1 - t0, update: t2 - t1, paint: t3 - t1, restyle: t4 - t3, expand, nodes, opened };
})()`
	var got graphTiming
	await := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	if err := chromedp.Run(ctx, chromedp.Evaluate(script, &got, await)); err != nil {
		t.Fatalf("timing the drawing: %v", err)
	}
	return got
}

// layeredDAG is a workflow of n tasks after an approval gate that holds
// them all Pending: layers of width tasks, each after two or three tasks
// of the layer before (fan-in) and before as many of the next (fan-out).
func layeredDAG(n, width int) string {
	var b strings.Builder
	b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: big-dag}\nspec:\n  tasks:\n")
	b.WriteString("  - name: hold\n    gate: {approve: {message: \"held so that the drawing stays still\"}}\n")
	name := func(i int) string { return fmt.Sprintf("t%02d-%02d", i/width, i%width) }
	for i := range n - 1 {
		deps := []string{"hold"}
		if layer := i / width; layer > 0 {
			prev := (layer - 1) * width
			deps = []string{name(prev + i%width), name(prev + (i*7+3)%width)}
			if i%3 == 0 {
				deps = append(deps, name(prev+(i*13+5)%width))
			}
		}
		fmt.Fprintf(&b, "  - name: %s\n    dependsOn: [%s]\n    command: [\"true\"]\n", name(i), strings.Join(dedupe(deps), ", "))
	}
	return b.String()
}

func dedupe(s []string) []string {
	seen, out := map[string]bool{}, []string{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// buttons is a mouse event's pressed buttons (1: the left one).
func buttons(b int64) chromedp.MouseOption {
	return func(p *input.DispatchMouseEventParams) *input.DispatchMouseEventParams { return p.WithButtons(b) }
}

// viewOf reads the drawing's pan and zoom.
func viewOf(ctx context.Context, t *testing.T) string {
	t.Helper()
	var v string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#graph g.viewport").getAttribute("transform")`, &v)); err != nil {
		t.Fatal(err)
	}
	return v
}

// refreshed waits for the run page to update itself again (it does on
// each event and every few seconds), counted by #view's data-renders.
func refreshed(ctx context.Context, t *testing.T) {
	t.Helper()
	err := chromedp.Run(ctx, chromedp.Evaluate(`window.rendersBefore = +document.getElementById("view").dataset.renders`, nil),
		chromedp.Poll(`+document.getElementById("view").dataset.renders > window.rendersBefore`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatalf("waiting for the page to update: %v", err)
	}
}

// TestWebUIDrawsA500TaskDAG draws a layered DAG of 500 tasks on a live
// server: every task a node, laid out once; dragging and the wheel move
// and zoom it, the buttons too, and the page's refreshes keep the view.
// It logs how long the drawing took in the browser.
func TestWebUIDrawsA500TaskDAG(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, layeredDAG(500, 25))
	var first, fitPNG []byte
	var hold string
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)),
		chromedp.Poll(`document.querySelectorAll("#graph g.node").length === 500 && `+node("hold", "Running"), nil,
			chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.TextContent(`#graph g.node[data-name="hold"]`, &hold),
		chromedp.FullScreenshot(&first, 100),
	)
	if err != nil {
		t.Fatalf("drawing 500 tasks: %v", err)
	}
	saveShot(t, "kiln-ui-graph-500-tasks.png", first)
	if hold != "holdwaits for approval" {
		t.Errorf("the gate's node reads %q", hold)
	}
	var edges int
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelectorAll("#graph path.edge:not(.exit)").length`, &edges)); err != nil {
		t.Fatal(err)
	}
	if edges < 1000 {
		t.Errorf("the drawing has %d edges, want every dependency's (over 1000)", edges)
	}

	tm := timeGraph(ctx, t, run.ID, "")
	t.Logf("500-task DAG: run JSON fetched in %.0f ms; drawn (update) in %.0f ms, painted %.0f ms after the JSON; restyled in %.0f ms",
		tm.Fetch, tm.Update, tm.Paint, tm.Restyle)
	if tm.Nodes != 500 {
		t.Errorf("the timed drawing has %d nodes, want 500", tm.Nodes)
	}

	// Drag, the wheel and a button each change the view; a refresh keeps it.
	before := viewOf(ctx, t)
	var box []float64
	if err := chromedp.Run(ctx, chromedp.Evaluate(`(() => { const r = document.querySelector("#graph svg").getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()`, &box)); err != nil {
		t.Fatal(err)
	}
	x, y := box[0]+box[2]/2, box[1]+box[3]/2
	err = chromedp.Run(ctx,
		chromedp.MouseEvent(input.MousePressed, x, y, chromedp.ButtonLeft, buttons(1)),
		chromedp.MouseEvent(input.MouseMoved, x-40, y-20, buttons(1)),
		chromedp.MouseEvent(input.MouseMoved, x-120, y-60, buttons(1)),
		chromedp.MouseEvent(input.MouseReleased, x-120, y-60, chromedp.ButtonLeft),
	)
	if err != nil {
		t.Fatal(err)
	}
	dragged := viewOf(ctx, t)
	if dragged == before {
		t.Errorf("dragging left the view at %s", before)
	}
	wheel := func(p *input.DispatchMouseEventParams) *input.DispatchMouseEventParams {
		return p.WithDeltaX(0).WithDeltaY(-400)
	}
	if err := chromedp.Run(ctx, chromedp.MouseEvent(input.MouseWheel, x, y, wheel)); err != nil {
		t.Fatal(err)
	}
	zoomed := viewOf(ctx, t)
	if zoomed == dragged || !strings.Contains(zoomed, "scale(") {
		t.Errorf("the wheel left the view at %s", dragged)
	}
	// The refresh restyles the drawing's nodes as they are: it draws none anew.
	var same bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#graph g.node[data-name="hold"]').dataset.mark = "kept"`, nil)); err != nil {
		t.Fatal(err)
	}
	refreshed(ctx, t)
	if kept := viewOf(ctx, t); kept != zoomed {
		t.Errorf("after a refresh the view is %s, want %s kept", kept, zoomed)
	}
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('#graph g.node[data-name="hold"]').dataset.mark === "kept"`, &same)); err != nil || !same {
		t.Errorf("a refresh drew the node hold anew (%v), want it restyled in place", err)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#graph .kg-fit`), chromedp.FullScreenshot(&fitPNG, 100)); err != nil {
		t.Fatal(err)
	}
	if fitted := viewOf(ctx, t); fitted == zoomed {
		t.Errorf("Fit left the view at %s", zoomed)
	}
	saveShot(t, "kiln-ui-graph-500-tasks-fit.png", fitPNG)

	// Clicking a node selects it: its panel opens, the node is highlighted.
	err = chromedp.Run(ctx, chromedp.Click(`#graph g.node[data-name="hold"] rect`),
		chromedp.Poll(`document.querySelector('#graph g.node.selected[data-name="hold"]') !== null && document.querySelector("#panel h3") !== null`, nil,
			chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Errorf("selecting a node: %v", err)
	}
}

// TestWebUIFoldsA10000ItemMap draws a map over 10,000 items while it runs:
// one node with its items' counts, which opens on request to its first
// items and a "+N more" node. It logs how long the drawing took.
func TestWebUIFoldsA10000ItemMap(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	gate := filepath.Join(sharedDir(t), "gate")
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: big-map}
spec:
  tasks:
  - name: prep
    command: ["true"]
  - name: sweep
    dependsOn: [prep]
    forEach: {range: {count: 10000}, maxParallel: 2}
    command: [sh, -c, 'while [ ! -e `+gate+` ]; do sleep 0.1; done']
  - name: report
    dependsOn: [sweep]
    command: ["true"]
`)
	t.Cleanup(func() {
		_ = os.WriteFile(gate, nil, 0o644)
		req, _ := http.NewRequest("POST", base+"/api/v1/runs/"+string(run.ID)+"/cancel", nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		waitServed(t, base, admin, run.ID, "")
	})
	var sweep, more string
	var folded, opened []byte
	var nodes, items int
	sweepNode := `#graph g.node[data-name="sweep"]`
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)),
		chromedp.Poll(`(document.querySelector('`+sweepNode+`.group') || {}).textContent?.includes("/10000 ✓ 2 ▶")`, nil,
			chromedp.WithPollingTimeout(90*time.Second)),
		chromedp.TextContent(sweepNode, &sweep),
		chromedp.Evaluate(`document.querySelectorAll("#graph g.node").length`, &nodes),
		chromedp.FullScreenshot(&folded, 100),
	)
	if err != nil {
		t.Fatalf("drawing the map: %v", err)
	}
	saveShot(t, "kiln-ui-graph-10000-items.png", folded)
	if sweep != "sweep0/10000 ✓ 2 ▶ 9998 ○" || nodes != 3 { // every count the panel says, pending too
		t.Errorf("the drawing has %d nodes and the map's reads %q; want 3, the map folded with its counts", nodes, sweep)
	}

	tm := timeGraph(ctx, t, run.ID, "sweep")
	t.Logf("10,000-item map: run JSON fetched in %.0f ms; drawn (update) in %.0f ms, painted %.0f ms after the JSON; restyled in %.0f ms; opened in %.0f ms",
		tm.Fetch, tm.Update, tm.Paint, tm.Restyle, tm.Expand)
	if tm.Nodes != 3 || tm.Opened != 3+24 {
		t.Errorf("the timed drawing has %d nodes, then %d opened; want 3, then 27", tm.Nodes, tm.Opened)
	}

	err = chromedp.Run(ctx,
		chromedp.Click(sweepNode+" g.expander circle", chromedp.NodeVisible),
		chromedp.Poll(`document.querySelector('#graph g.more[data-more="sweep"]') !== null`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.TextContent(`#graph g.more[data-more="sweep"]`, &more),
		chromedp.Evaluate(`document.querySelectorAll('#graph g.node[data-name^="sweep."]').length`, &items),
		chromedp.FullScreenshot(&opened, 100),
	)
	if err != nil {
		t.Fatalf("opening the map: %v", err)
	}
	saveShot(t, "kiln-ui-graph-10000-items-open.png", opened)
	if more != "+9976 more" || items != 24 {
		t.Errorf("the open map shows %d items and %q, want 24 and +9976 more", items, more)
	}
	// The open map stays open through the page's refreshes, which restyle
	// its nodes in place, and its items are nodes one selects.
	var same bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('`+sweepNode+`').dataset.mark = "kept"`, nil)); err != nil {
		t.Fatal(err)
	}
	refreshed(ctx, t)
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('`+sweepNode+`').dataset.mark === "kept"`, &same)); err != nil || !same {
		t.Errorf("a refresh drew the map's node anew (%v), want it restyled in place", err)
	}
	var nodeIDs []cdp.NodeID
	err = chromedp.Run(ctx, chromedp.NodeIDs(`#graph g.node[data-name="sweep.0"]`, &nodeIDs, chromedp.ByQuery),
		chromedp.Click(`#graph .kg-fit`),
		chromedp.Click(`#graph g.node[data-name="sweep.0"] rect`),
		chromedp.Poll(`(document.querySelector("#panel h3") || {}).textContent?.startsWith("sweep.0")`, nil, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil || len(nodeIDs) != 1 {
		t.Errorf("after a refresh the open map's item sweep.0 is drawn %d times, and selecting it: %v", len(nodeIDs), err)
	}
}

// TestWebUIDrawsASubworkflowAsAGroup draws a subworkflow's tasks in a
// group of their own, in their order, between the tasks around it; a long
// name is cut on its node and shown whole on hover.
func TestWebUIDrawsASubworkflowAsAGroup(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: main}
spec:
  tasks:
  - name: prepare-the-training-data-set
    command: ["true"]
  - name: eval
    dependsOn: [prepare-the-training-data-set]
    workflow: {name: evaluate}
  - name: show
    dependsOn: [eval]
    command: ["true"]
---
apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: evaluate}
spec:
  tasks:
  - {name: score, command: ["true"]}
  - {name: check, dependsOn: [score], command: ["true"]}
`)
	var label, tip string
	var boxes map[string][]float64
	var png []byte
	long := `#graph g.node[data-name="prepare-the-training-data-set"]`
	steps := []chromedp.Action{
		chromedp.Navigate(base + "/?token=" + admin + "#/runs/" + string(run.ID)),
		chromedp.Poll(node("show", "Succeeded")+` && `+node("eval.check", "Succeeded"), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.TextContent(long+" text.label", &label),
		chromedp.Evaluate(`Object.fromEntries(["eval", "eval.score", "eval.check", "show"].map((n) => {
  const r = document.querySelector('#graph g.node[data-name="' + n + '"]').getBoundingClientRect();
  return [n, [r.left, r.right]];
}).concat([["group", (() => { const r = document.querySelector('#graph g.cluster[data-cluster="eval"] rect').getBoundingClientRect(); return [r.left, r.right]; })()]]))`, &boxes),
		chromedp.ScrollIntoView(long),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var r []float64
			if err := chromedp.Evaluate(`(() => { const r = document.querySelector('`+long+` rect').getBoundingClientRect(); return [r.x + 20, r.y + 10]; })()`, &r).Do(ctx); err != nil {
				return err
			}
			return chromedp.MouseEvent(input.MouseMoved, r[0], r[1]).Do(ctx)
		}),
		chromedp.Poll(`!document.querySelector("#graph .kg-tip").hidden`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Text(`#graph .kg-tip`, &tip),
		chromedp.FullScreenshot(&png, 100),
	}
	for i, s := range steps {
		if err := chromedp.Run(ctx, s); err != nil {
			t.Fatalf("drawing the subworkflow, step %d of %d: %v", i+1, len(steps), err)
		}
	}
	saveShot(t, "kiln-ui-graph-subworkflow.png", png)
	if !strings.HasSuffix(label, "…") || len([]rune(label)) > 19 {
		t.Errorf("the long name's label reads %q, want it cut with an ellipsis", label)
	}
	if !strings.HasPrefix(tip, "prepare-the-training-data-set · Succeeded") {
		t.Errorf("hovering the long name shows %q, want it whole with its phase", tip)
	}
	group, in := boxes["group"], func(n string) bool { return boxes[n][0] >= boxes["group"][0] && boxes[n][1] <= boxes["group"][1] }
	if len(group) != 2 || !in("eval") || !in("eval.score") || !in("eval.check") || in("show") {
		t.Errorf("the group spans %v; want eval and its tasks in it, show outside: %v", group, boxes)
	}
	if !(boxes["eval.score"][1] <= boxes["eval.check"][0] && boxes["eval.check"][1] <= boxes["show"][0]) {
		t.Errorf("the tasks are not drawn in their order eval.score, eval.check, show: %v", boxes)
	}
}
