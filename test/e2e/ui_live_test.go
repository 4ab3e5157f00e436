package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestWebUIFollowsALogInPlace follows a task's log on the logs tab: what
// the task writes later is appended without the panel being rebuilt, so
// a scroll and a selection in it stay; unfollowed it stops, and followed
// again it goes on from where it stopped, no line twice. The attempt
// selector shows an earlier attempt's log, a gang's lines show their
// process's label, the page reads the run's event stream with the token
// in a header (never in an address), and its address brings the tab
// and the task back on a reload and with Back.
func TestWebUIFollowsALogInPlace(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	dir := sharedDir(t)
	step1, step2, tried := filepath.Join(dir, "step1"), filepath.Join(dir, "step2"), filepath.Join(dir, "tried")
	waitFile := func(f string) string { return `while [ ! -e ` + f + ` ]; do sleep 0.05; done; ` }
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: live}
spec:
  tasks:
  - name: talk
    retries: {limit: 1}
    command: [sh, -c, 'if [ ! -e `+tried+` ]; then touch `+tried+`; echo from the first attempt; exit 1; fi; `+
		`for i in $(seq 1 200); do echo first $i; done; `+waitFile(step1)+
		`for i in $(seq 1 100); do echo second $i; done; `+waitFile(step2)+
		`for i in $(seq 1 50); do echo third $i; done']
  - name: gang
    train: {runtime: plain, numNodes: 2, command: [sh, -c, 'echo hello from the gang'], resourcesPerNode: {cpu: 100m}}
`)
	lines := `document.querySelectorAll("#log .line")`
	has := func(text string) string {
		return `[...` + lines + `].some((l) => l.textContent === "` + text + `\n")`
	}
	write := func(f string) chromedp.Action {
		return chromedp.ActionFunc(func(context.Context) error { return os.WriteFile(f, nil, 0o644) })
	}
	var scroll, count, paused, resumed int
	var selection, firstAttempt, state, active string
	var kept bool
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)+"?node=talk&tab=logs"),
		waitJS(has("first 200")),
		chromedp.Evaluate(`document.getElementById("logbox").mark = "kept";
			const pre = document.getElementById("log"); pre.scrollTop = 0;
			const r = document.createRange(); r.selectNodeContents(pre.querySelector(".line"));
			getSelection().removeAllRanges(); getSelection().addRange(r);`, nil),
		write(step1),
		waitJS(has("second 100")),
		chromedp.Evaluate(`document.getElementById("log").scrollTop`, &scroll),
		chromedp.Evaluate(`getSelection().toString()`, &selection),
		chromedp.Evaluate(`document.getElementById("logbox").mark === "kept"`, &kept),
		chromedp.Evaluate(lines+`.length`, &count),
		shot(t, "kiln-ui-log-appended.png"),

		chromedp.Click(`#logbox .log-follow`),
		waitJS(`document.querySelector("#logbox .log-state").textContent === "paused"`),
		write(step2),
		chromedp.ActionFunc(func(context.Context) error { pause(t, 1500*time.Millisecond); return nil }),
		chromedp.Evaluate(lines+`.length`, &paused),
		chromedp.Click(`#logbox .log-follow`),
		waitJS(has("third 50")),
		chromedp.Evaluate(lines+`.length`, &resumed),
		chromedp.Text(`#logbox .log-state`, &state),

		chromedp.Evaluate(`const s = document.querySelector("#logbox .log-attempt"); s.value = "1"; s.dispatchEvent(new Event("change"))`, nil),
		waitJS(has("from the first attempt")),
		chromedp.Text(`#log`, &firstAttempt),
		shot(t, "kiln-ui-log-attempt-1.png"),
	)
	if scroll != 0 || !strings.HasPrefix(selection, "first 1") || !kept || count != 300 {
		t.Errorf("after lines came: scrollTop %d, selection %q, the log kept %v, %d lines; want 0, the first line, kept, 300", scroll, selection, kept, count)
	}
	if paused != 300 || resumed != 350 {
		t.Errorf("unfollowed the log has %d lines after the task wrote more, and %d once followed again; want 300 and 350", paused, resumed)
	}
	if state != "ended" {
		t.Errorf("the log's state reads %q once the attempt ended, want ended", state)
	}
	if strings.TrimSpace(firstAttempt) != "from the first attempt" {
		t.Errorf("attempt 1's log reads %q", firstAttempt)
	}

	var procs []string
	var gangLine, events string
	var tokenInURL bool
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)+"?node=gang&tab=logs"),
		waitJS(`document.querySelectorAll("#logbox .log-procs .proc").length === 2`),
		chromedp.Evaluate(`[...document.querySelectorAll("#logbox .log-procs .proc")].map((p) => p.dataset.proc).sort()`, &procs),
		chromedp.Text(`#log .line`, &gangLine),
		shot(t, "kiln-ui-log-gang.png"),
		chromedp.Reload(),
		waitJS(`document.querySelector("#tabs a.active")?.dataset.tab === "logs" && document.querySelectorAll("#log .line").length === 2`),
		chromedp.Click(`#tabs a[data-tab="graph"]`),
		waitJS(`document.querySelector("#panel[data-node=gang]") !== null`),
		chromedp.NavigateBack(),
		waitJS(`document.querySelector("#tabs a.active")?.dataset.tab === "logs"`),
		chromedp.Text(`#tabs a.active`, &active),
		chromedp.Evaluate(`liveEvents(page.id).filter((e) => e.node === "gang").map((e) => e.reason).join(" ")`, &events),
		chromedp.Evaluate(`performance.getEntriesByType("resource").some((e) => e.name.includes(`+jsString(admin)+`))`, &tokenInURL),
	)
	if len(procs) != 2 || procs[0] == procs[1] || !strings.Contains(gangLine, " hello from the gang") {
		t.Errorf("the gang's log shows the processes %v and the line %q; want two labels and their lines", procs, gangLine)
	}
	if !strings.Contains(events, "Started") || !strings.Contains(events, "Succeeded") {
		t.Errorf("the page read the gang's events %q from the run's events, want it Started and Succeeded", events)
	}
	if tokenInURL {
		t.Errorf("the token went in an address the page asked for")
	}
	if active != "Logs" {
		t.Errorf("Back shows the %q tab, want Logs", active)
	}
	done := waitAPIRun(t, base, admin, run.ID, "the run to succeed", func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseSucceeded })
	logTimes(ctx, t, base, admin, done)
}

// logTimes turns on the log's times (seam 1 of issue 16: timestamps=true)
// on the gang's log: each line shows when it was written, within its
// attempt. A server that does not record them yet shows the lines alone.
func logTimes(ctx context.Context, t *testing.T, base, admin string, run apiv1.Run) {
	var stamps []string
	uiSteps(ctx, t,
		chromedp.Click(`#logbox .log-times`),
		waitJS(`document.querySelectorAll("#log .line").length === 2 && document.querySelector("#logbox .log-state").textContent === "ended"`),
		chromedp.Evaluate(`[...document.querySelectorAll("#log .line .ts")].map((s) => s.textContent.trim())`, &stamps),
		shot(t, "kiln-ui-log-times.png"),
	)
	req, _ := http.NewRequest("GET", base+"/api/v1/runs/"+string(run.ID)+"/tasks/gang/logs?timestamps=true", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if _, err := time.Parse(time.RFC3339Nano, strings.Fields(string(b) + " x")[0]); err != nil {
		t.Logf("the server on this branch writes no times in logs yet (seam 1): %q; the log's times await the merge", b)
		return
	}
	a := run.Status.Node("gang").Attempts[0]
	if len(stamps) != 2 {
		t.Fatalf("with times on the gang's log shows the times %v, want one a line", stamps)
	}
	for _, s := range stamps {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || at.Before(a.StartedAt.Add(-time.Second)) || at.After(a.FinishedAt.Add(time.Second)) {
			t.Errorf("a line's time %q is not within its attempt, %s to %s", s, a.StartedAt, a.FinishedAt)
		}
	}
}
