package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
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
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("Debian's chromium is not installed (make deps installs it)")
	}
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	req, _ := http.NewRequest("POST", base+"/api/v1/runs", strings.NewReader(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: ui}
spec:
  tasks:
  - {name: first, command: [sh, -c, 'echo hello from the ui; sleep 1']}
  - {name: second, dependsOn: [first], command: [sh, -c, 'sleep 1']}
`))
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var run apiv1.Run
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &run); err != nil || run.ID == "" {
		t.Fatalf("submit: %s", b)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1100, 700))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	var rows, logText string
	var png []byte
	node := func(name, phase string) string {
		return `document.querySelector('g.node[data-name="` + name + `"][data-phase="` + phase + `"]') !== null`
	}
	err = chromedp.Run(ctx,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		chromedp.WaitVisible(`tr[data-run="`+string(run.ID)+`"]`),
		chromedp.Text("#runs", &rows),
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)), // the token stays in the browser
		chromedp.Poll(node("first", "Running"), nil, chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.Poll(node("second", "Succeeded"), nil),
		chromedp.Click(`g.node[data-name="first"] rect`),
		chromedp.Poll(`(document.querySelector("#log") || {}).textContent?.includes("hello from the ui")`, nil),
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
	shot := filepath.Join(os.TempDir(), "kiln-ui.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
}
