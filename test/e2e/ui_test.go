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
