package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// bar is a timeline bar as the page draws it.
type bar struct {
	Node    string `json:"node"`
	Attempt string `json:"attempt"`
	Kind    string `json:"kind"` // "run" or "queue"
	Start   string `json:"start"`
	End     string `json:"end"`
}

// readBars is a script that lists the timeline's bars.
const readBars = `[...document.querySelectorAll("#timeline .tl-row")].flatMap((r) =>
  [...r.querySelectorAll(".tl-bar, .tl-queue")].map((b) => ({node: r.dataset.node, attempt: r.dataset.attempt,
    kind: b.classList.contains("tl-queue") ? "queue" : "run", start: b.dataset.start, end: b.dataset.end || ""})))`

// TestWebUIShowsTimesAndATimeline runs, on a server with one cpu, two
// tasks of one cpu each (one waits in the queue) and a task that fails
// once: the timeline draws a bar per attempt from the times the API
// records, and the queue's wait before the task that waited, from its
// events; the runs list's duration of a running run ticks in place.
func TestWebUIShowsTimesAndATimeline(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServeAs(t, home, nil, nil, "--cpus", "1")
	dir := sharedDir(t)
	release, once := filepath.Join(dir, "release"), filepath.Join(dir, "once")
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: times}
spec:
  tasks:
  - {name: one, resources: {cpu: "1"}, command: [sh, -c, 'while [ ! -e `+release+` ]; do sleep 0.05; done']}
  - {name: two, resources: {cpu: "1"}, command: [sh, -c, 'while [ ! -e `+release+` ]; do sleep 0.05; done']}
  - name: flaky
    dependsOn: [one, two]
    retries: {limit: 1}
    command: [sh, -c, 'if [ -e `+once+` ]; then exit 0; fi; touch `+once+`; exit 3']
`)
	waitAPIRun(t, base, admin, run.ID, "a task waiting for the cpu", func(r apiv1.Run) bool {
		for _, n := range r.Status.Nodes {
			if n.Phase == apiv1.PhaseWaiting {
				return true
			}
		}
		return false
	})
	row := `tr[data-run="` + string(run.ID) + `"]`
	var before, after string
	var kept bool
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		waitJS(`(document.querySelector('`+row+` td.took') || {}).textContent > ""`),
		chromedp.Evaluate(`document.querySelector('`+row+`').seen = true`, nil),
		chromedp.Text(row+` td.took`, &before),
		chromedp.ActionFunc(func(ctx context.Context) error { // built once before is read
			return waitJS(`document.querySelector('` + row + ` td.took').textContent !== ` + jsString(before)).Do(ctx)
		}),
		chromedp.Text(row+` td.took`, &after),
		chromedp.Evaluate(`document.querySelector('`+row+`').seen === true`, &kept),
		shot(t, "kiln-ui-runs-times.png"),
	)
	t.Logf("the running run's duration ticked from %q to %q", before, after)
	if before == after || !kept {
		t.Errorf("the running run's duration went from %q to %q, its row kept: %v; want it to tick in place", before, after, kept)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := waitAPIRun(t, base, admin, run.ID, "the run to succeed", func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseSucceeded })

	var bars []bar
	var runTimes string
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)+"?tab=timeline"),
		waitJS(`document.querySelectorAll("#timeline .tl-row").length === 4 && !document.querySelector("#timeline [data-open]")`),
		chromedp.Evaluate(readBars, &bars),
		chromedp.Text(`.run-times`, &runTimes),
		shot(t, "kiln-ui-timeline.png"),
		chromedp.Click(`#timeline .tl-row[data-node="flaky"] a`),
		chromedp.WaitVisible(`#panel[data-node="flaky"] #attempts tr[data-attempt="2"]`),
		shot(t, "kiln-ui-timeline-attempts.png"),
	)
	t.Logf("the run's times read %q", runTimes)
	checkBars(t, done, waitingSince(t, base, admin, run.ID), bars)
}

// waitingSince maps each task to when it first entered Waiting, from the run's events.
func waitingSince(t *testing.T, base, token string, id apiv1.RunID) map[string]string {
	t.Helper()
	var page struct{ Items []apiv1.Event }
	apiGetJSON(t, base, token, "/api/v1/runs/"+string(id)+"/events", &page)
	out := map[string]string{}
	for _, ev := range page.Items {
		if _, ok := out[ev.Node]; ev.Node != "" && ev.Phase == apiv1.PhaseWaiting && !ok {
			out[ev.Node] = ev.Time.Format(time.RFC3339Nano)
		}
	}
	return out
}

// checkBars checks that the timeline has a bar for each attempt of run
// from its start to its end, and a queue bar for each task that waited.
func checkBars(t *testing.T, run apiv1.Run, waited map[string]string, bars []bar) {
	t.Helper()
	want := map[string]bool{}
	for _, n := range run.Status.Nodes {
		for _, a := range n.Attempts {
			want[n.Name+"/run/"+a.StartedAt.Format(time.RFC3339Nano)+"/"+a.FinishedAt.Format(time.RFC3339Nano)] = true
			if w, ok := waited[n.Name]; ok && a.Number == 1 {
				want[n.Name+"/queue/"+w+"/"+a.StartedAt.Format(time.RFC3339Nano)] = true
			}
		}
	}
	if len(waited) != 1 {
		t.Errorf("the events say %v waited; want one of one and two", waited)
	}
	got := map[string]bool{}
	for _, b := range bars {
		got[b.Node+"/"+b.Kind+"/"+norm(t, b.Start)+"/"+norm(t, b.End)] = true
	}
	for k := range want {
		if !got[k] {
			t.Errorf("the timeline lacks the bar %s; it has %v", k, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the timeline has %d bars, want %d: %v", len(got), len(want), got)
	}
}

// norm writes an RFC 3339 time as Go does, so the page's and the API's compare.
func norm(t *testing.T, s string) string {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Errorf("the timeline's time %q is not RFC 3339: %v", s, err)
	}
	return v.Format(time.RFC3339Nano)
}

// jsString quotes s for a script.
func jsString(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '"' || r == '\\' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}
