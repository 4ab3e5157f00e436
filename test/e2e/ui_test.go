package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestWebUIShowsARunLive drives the web UI in real headless Chromium.
func TestWebUIShowsARunLive(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	// The first task holds until the test has seen it running in the
	// page, so the page is seen to change live, however slow the browser.
	gate := filepath.Join(t.TempDir(), "gate")
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: ui}
spec:
  tasks:
  - {name: first, command: [sh, -c, 'echo hello from the ui; while [ ! -e `+gate+` ]; do sleep 0.05; done']}
  - {name: second, dependsOn: [first], command: ["true"]}
`)

	var rows, logText string
	var png []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		chromedp.WaitVisible(`tr[data-run="`+string(run.ID)+`"]`),
		chromedp.Text("#runs", &rows),
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)), // the token stays in the browser
		chromedp.Poll(node("first", "Running"), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.ActionFunc(func(context.Context) error { return os.WriteFile(gate, nil, 0o644) }),
		chromedp.Poll(node("second", "Succeeded"), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Click(`g.node[data-name="first"] rect`),
		chromedp.Poll(`(document.querySelector("#log") || {}).textContent?.includes("hello from the ui")`, nil,
			chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Text("#log", &logText),
		chromedp.FullScreenshot(&png, 100), // 100: PNG
	)
	if err != nil {
		t.Fatalf("driving the UI: %v", err)
	}
	if !strings.Contains(rows, string(run.ID)) {
		t.Errorf("the runs page does not list %s: %q", run.ID, rows)
	}
	if !strings.Contains(logText, "hello from the ui") {
		t.Errorf("the log panel shows %q", logText)
	}
	saveShot(t, "kiln-ui.png", png)
}

// browser starts headless Chromium for the test, with three minutes to
// do what the test asks of it.
func browser(t *testing.T) context.Context {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("Debian's chromium is not installed (make deps installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1100, 700))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// node is a script that is true once the drawing shows task name in phase.
func node(name, phase string) string {
	return `document.querySelector('g.node[data-name="` + name + `"][data-phase="` + phase + `"]') !== null`
}

// saveShot keeps a screenshot of the page where one can look at it.
func saveShot(t *testing.T, name string, png []byte) {
	t.Helper()
	shot := filepath.Join(os.TempDir(), name)
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}

// TestWebUIShowsGroupsAndTakesGateInputs drives a run with a map, an
// approval, a signal and an onExit task through the web UI: the map's
// node counts its items and lists them, a refused signal shows the API's
// error, and the approval given in the page lets the run succeed.
func TestWebUIShowsGroupsAndTakesGateInputs(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: gated}
spec:
  outputs:
    parameters: [{name: words, value: "{{tasks.each.outputs.parameters.out}}"}]
  tasks:
  - name: each
    forEach: {items: [a, b, c]}
    command: [sh, -c, 'echo "w-{{item}}" > $KILN_OUTPUTS/out']
    outputs: {parameters: [{name: out}]}
  - name: ship
    dependsOn: [each]
    gate: {approve: {message: "ship it?"}}
  - name: count
    gate: {signal: {type: int, message: "how many?"}}
  - name: after
    dependsOn: [ship, count]
    command: ["true"]
  onExit:
  - name: notify
    command: ["true"]
`)
	var eachNode, children, refused, typed, decided, shipNode, outputs, exitNode string
	var png, waitingPNG []byte
	wait := func(script string) chromedp.Action {
		return chromedp.Poll(script, nil, chromedp.WithPollingTimeout(60*time.Second))
	}
	ship, count := `section.gate.waiting[data-gate="ship"]`, `section.gate.waiting[data-gate="count"]`
	steps := []chromedp.Action{
		chromedp.Navigate(base + "/?token=" + admin + "#/runs/" + string(run.ID)),
		wait(node("each", "Succeeded")),
		chromedp.TextContent(`g.node[data-name="each"]`, &eachNode),
		chromedp.Click(`g.node[data-name="each"] rect`),
		wait(`document.querySelectorAll("#children tr[data-phase=Succeeded]").length === 3`),
		chromedp.Text("#children", &children),

		// A value that is not an int is refused, and the page says why.
		chromedp.WaitVisible(count + " input.value"),
		chromedp.SendKeys(count+" input.value", "ten"),
		chromedp.Click(count + " button.send"),
		wait(`document.querySelector('` + count + ` .result.error') !== null`),
		chromedp.Text(count+" .result", &refused),
		chromedp.SetValue(count+" input.value", "3"),
		chromedp.Click(count + " button.send"),
		wait(`document.querySelector('p.gate.decided[data-gate="count"]') !== null`),

		chromedp.WaitVisible(ship + " button.approve"),
		chromedp.TextContent(`g.node[data-name="ship"]`, &shipNode),
		chromedp.FullScreenshot(&waitingPNG, 100),
		chromedp.SendKeys(ship+" input.reason", "looks good"),
		// What one types survives the page's updates, which leave what did not change in place.
		chromedp.Evaluate(`window.rendersBefore = +document.getElementById("view").dataset.renders`, nil),
		wait(`+document.getElementById("view").dataset.renders > window.rendersBefore`),
		chromedp.Value(ship+" input.reason", &typed),
		chromedp.Click(ship + " button.approve"),
		wait(`document.querySelector("h2 .phase.Succeeded") !== null`),
		wait(`document.querySelector('p.gate.decided[data-gate="ship"]') !== null && ` + node("onExit", "Succeeded")),
		chromedp.Text(`p.gate.decided[data-gate="ship"]`, &decided),
		chromedp.TextContent(`g.node[data-name="onExit"]`, &exitNode),
		chromedp.Text("#outputs", &outputs),
		chromedp.FullScreenshot(&png, 100),
	}
	for i, s := range steps {
		if err := chromedp.Run(ctx, s); err != nil {
			t.Fatalf("driving the UI, step %d of %d: %v", i+1, len(steps), err)
		}
	}
	saveShot(t, "kiln-ui-gate-waits.png", waitingPNG)
	saveShot(t, "kiln-ui-gates.png", png)

	if eachNode != "each3/3 ✓" {
		t.Errorf("the map's node reads %q, want each and 3/3 ✓", eachNode)
	}
	for _, item := range []string{"each.0", "each.1", "each.2"} {
		if !strings.Contains(children, "\n"+item+"\tSucceeded\t") {
			t.Errorf("the map's children list lacks %s, succeeded: %q", item, children)
		}
	}
	if shipNode != "shipwaits for approval" {
		t.Errorf("the waiting gate's node reads %q", shipNode)
	}
	if typed != "looks good" {
		t.Errorf("after a refresh the reason reads %q, want what was typed", typed)
	}
	if !strings.Contains(refused, "KLN-4014") || !strings.Contains(refused, `"ten" is not an int`) {
		t.Errorf("the refused signal shows %q, want the API's KLN-4014 error", refused)
	}
	if !strings.HasPrefix(decided, "ship: approved by admin (token ") || !strings.HasSuffix(decided, "(“looks good”)") {
		t.Errorf("the decided gate reads %q, want it approved by the admin token, with its reason", decided)
	}
	if exitNode != "onExit1/1 ✓" {
		t.Errorf("the onExit node reads %q", exitNode)
	}
	if outputs != "Outputs\nwords\t\n"+`["w-a","w-b","w-c"]` {
		t.Errorf("the outputs read %q", outputs)
	}
	got := describe(t, home, run.ID)
	for _, n := range got.Status.Nodes {
		switch g := n.Gate; n.Name {
		case "ship":
			if g == nil || g.Decision != "approved" || g.Reason != "looks good" || !strings.HasPrefix(g.By, "admin (token ") {
				t.Errorf("the stored gate ship is %+v, want approved by admin for %q", g, "looks good")
			}
		case "count":
			if g == nil || g.Decision != "signalled" || g.Value != "3" {
				t.Errorf("the stored gate count is %+v, want the value 3", g)
			}
		}
	}
}

// TestWebUIShowsWhereACachedResultCameFrom runs a cached task twice
// through the API and reads the second run's page: the node says it came
// from the cache, and its panel links to the run that computed it.
func TestWebUIShowsWhereACachedResultCameFrom(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	const wf = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: cached-ui}
spec:
  tasks:
  - name: prep
    command: [sh, -c, 'echo 7 > $KILN_OUTPUTS/num']
    cache: {version: "1"}
    outputs: {parameters: [{name: num}]}
`
	var ids []apiv1.RunID
	for range 2 {
		run := postRun(t, base, admin, wf)
		waitFor(t, "the run to end", func() bool { return describe(t, home, run.ID).Status.Phase.Done() })
		ids = append(ids, run.ID)
	}
	var nodeText, status, href string
	var ok bool
	steps := []chromedp.Action{
		chromedp.Navigate(base + "/?token=" + admin + "#/runs/" + string(ids[1])),
		chromedp.Poll(node("prep", "Succeeded"), nil, chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.TextContent(`g.node[data-name="prep"]`, &nodeText),
		chromedp.Click(`g.node[data-name="prep"] rect`),
		chromedp.WaitVisible(`p.cache-status`),
		chromedp.Text(`p.cache-status`, &status),
		chromedp.AttributeValue(`p.cache-status a`, "href", &href, &ok),
	}
	for i, s := range steps {
		if err := chromedp.Run(ctx, s); err != nil {
			t.Fatalf("driving the UI, step %d of %d: %v", i+1, len(steps), err)
		}
	}
	if nodeText != "prepfrom the cache" {
		t.Errorf("the cached node reads %q, want prep and from the cache", nodeText)
	}
	if !strings.HasPrefix(status, "Cache: Hit (key ") || !strings.Contains(status, "reused from run "+string(ids[0])+" (task prep)") {
		t.Errorf("the panel's cache line reads %q", status)
	}
	if href != "#/runs/"+string(ids[0]) {
		t.Errorf("the source run's link is %q, want #/runs/%s", href, ids[0])
	}
}
