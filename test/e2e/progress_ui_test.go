package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestWebUIShowsProgress drives a run with a training task that reports
// its progress and a map through the web UI: the runs list and the run's
// page show the run's tasks done of its total, and the training task's
// node and panel its percent and ETA.
func TestWebUIShowsProgress(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	dir := sharedDir(t)
	release := filepath.Join(dir, "release")
	report := `import json, os, time
p = os.environ["KILN_PROGRESS"]
json.dump({"progressPercentage": 40, "estimatedRemainingSeconds": 90, "metrics": [{"name": "loss", "value": "0.25"}]}, open(p + ".tmp", "w"))
os.replace(p + ".tmp", p)
while not os.path.exists("` + release + `"):
    time.sleep(0.05)
`
	script := writeFile(t, dir, "fit.py", report)
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: progress-ui}
spec:
  tasks:
  - name: fit
    train: {runtime: plain, command: [/usr/bin/python3, `+script+`], resourcesPerNode: {cpu: 100m}}
  - name: each
    forEach: {range: {count: 2}}
    resources: {cpu: 100m}
    command: [sh, -c, 'while [ ! -e `+release+` ]; do sleep 0.05; done']
`)
	wait := func(script string) chromedp.Action {
		return chromedp.Poll(script, nil, chromedp.WithPollingTimeout(60*time.Second))
	}
	row := `tr[data-run="` + string(run.ID) + `"] td.progress`
	var listed, fitNode, trainer, progress, done string
	var png []byte
	steps := []chromedp.Action{
		chromedp.Navigate(base + "/?token=" + admin + "#/"),
		wait(`(document.querySelector('` + row + `') || {}).textContent?.includes("0/3")`),
		chromedp.Text(row, &listed),
		chromedp.Navigate(base + "/#/runs/" + string(run.ID)),
		wait(`(document.querySelector('g.node[data-name="fit"]') || {}).textContent?.includes("40%")`),
		chromedp.TextContent(`g.node[data-name="fit"]`, &fitNode),
		chromedp.Click(`g.node[data-name="fit"] rect`),
		chromedp.WaitVisible(`#trainer-status`),
		chromedp.Text(`#trainer-status`, &trainer),
		chromedp.Text(`#progress`, &progress),
		chromedp.FullScreenshot(&png, 100),
		chromedp.ActionFunc(func(context.Context) error { return os.WriteFile(release, nil, 0o644) }),
		wait(`document.querySelector("h2 .phase.Succeeded") !== null`),
		chromedp.Text(`#progress`, &done),
	}
	for i, s := range steps {
		if err := chromedp.Run(ctx, s); err != nil {
			t.Fatalf("driving the UI, step %d of %d: %v", i+1, len(steps), err)
		}
	}
	saveShot(t, "kiln-ui-progress.png", png)
	if strings.TrimSpace(listed) != "0/3" {
		t.Errorf("the runs list shows progress %q, want 0/3", listed)
	}
	if fitNode != "⚙ fit40% · ETA 1m30s" {
		t.Errorf("the training task's node reads %q, want its percent and ETA", fitNode)
	}
	if !strings.HasPrefix(trainer, "Progress: 40% · ETA 1m30s · loss=0.25 (reported ") {
		t.Errorf("the training task's panel reads %q", trainer)
	}
	if !strings.Contains(progress, "0/3 done: 3 running") {
		t.Errorf("the run's page shows progress %q while its tasks run", progress)
	}
	if !strings.Contains(done, "3/3 done: 3 succeeded") {
		t.Errorf("the run's page shows progress %q at the end", done)
	}
}

// TestWebUIShowsAPlainTasksProgress: a plain task's report to
// $KILN_PROGRESS shows on its node and in its panel, as a training job's.
func TestWebUIShowsAPlainTasksProgress(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	dir := sharedDir(t)
	release := filepath.Join(dir, "release")
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: plain-progress}
spec:
  tasks:
  - name: prep
    command: [sh, -c, 'printf "{\"progressPercentage\": 30, \"metrics\": {\"rows\": 1200}}" > "$KILN_PROGRESS"; while [ ! -e `+release+` ]; do sleep 0.05; done']
`)
	wait := func(script string) chromedp.Action {
		return chromedp.Poll(script, nil, chromedp.WithPollingTimeout(60*time.Second))
	}
	var node, panel string
	steps := []chromedp.Action{
		chromedp.Navigate(base + "/?token=" + admin + "#/runs/" + string(run.ID)),
		wait(`(document.querySelector('g.node[data-name="prep"]') || {}).textContent?.includes("30%")`),
		chromedp.TextContent(`g.node[data-name="prep"]`, &node),
		chromedp.Click(`g.node[data-name="prep"] rect`),
		chromedp.WaitVisible(`#trainer-status`),
		chromedp.Text(`#trainer-status`, &panel),
		chromedp.ActionFunc(func(context.Context) error { return os.WriteFile(release, nil, 0o644) }),
		wait(`document.querySelector("h2 .phase.Succeeded") !== null`),
	}
	for i, s := range steps {
		if err := chromedp.Run(ctx, s); err != nil {
			t.Fatalf("driving the UI, step %d of %d: %v", i+1, len(steps), err)
		}
	}
	if !strings.Contains(node, "30%") || !strings.HasPrefix(panel, "Progress: 30% · rows=1200 (reported ") {
		t.Errorf("the plain task's node reads %q and its panel %q; want its 30%% and rows=1200", node, panel)
	}
}
