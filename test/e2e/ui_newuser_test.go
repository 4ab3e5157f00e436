package e2e

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// longTask is a task name longer than the timeline's label.
const longTask = "a-task-with-a-rather-long-descriptive-name-that-fails"

// mixedRun runs, on a fresh server, two tasks that succeed and one that
// fails twice (a retry), and waits for the run to fail.
func mixedRun(t *testing.T) (base, admin string, run apiv1.Run) {
	t.Helper()
	home := newHome(t)
	base, admin, _ = startServe(t, home)
	run = postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: mixed}
spec:
  tasks:
  - {name: ok1, command: [sh, -c, 'echo hello from ok1']}
  - {name: ok2, command: ["true"]}
  - name: `+longTask+`
    retries: {limit: 1}
    command: [sh, -c, 'echo failing now; exit 3']
`)
	run = waitAPIRun(t, base, admin, run.ID, "the run to fail", func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseFailed })
	return base, admin, run
}

// segShare is a script that reads, in the bar under sel, the failed
// segment's width as a share of the bar's (-1 without one).
func segShare(sel string) string {
	return `(() => { const b = document.querySelector('` + sel + ` .seg-bar'), f = b && b.querySelector(".seg.failed");
  return f ? f.getBoundingClientRect().width / b.getBoundingClientRect().width : -1; })()`
}

// TestWebUIProgressBarsShowFailures: a failed run's progress bar, in the
// runs list and on its page, has a red segment as wide as its share of
// failed tasks, beside the green of those that succeeded.
func TestWebUIProgressBarsShowFailures(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	base, admin, run := mixedRun(t)
	row := `tr[data-run="` + string(run.ID) + `"] td.progress`
	var listShare, pageShare float64
	var listText, pageText, colour string
	var okCount int
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		waitJS(`document.querySelector('`+row+` .seg.failed') !== null`),
		chromedp.Evaluate(segShare(row), &listShare),
		chromedp.Text(row, &listText),
		chromedp.Evaluate(`getComputedStyle(document.querySelector('`+row+` .seg.failed')).backgroundColor`, &colour),
		shot(t, "kiln-ui-progress-failed-list.png"),
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)),
		waitJS(`document.querySelector('#progress .seg.failed') !== null`),
		chromedp.Evaluate(segShare("#progress"), &pageShare),
		chromedp.Evaluate(`+document.querySelector('#progress .seg.succeeded').dataset.count`, &okCount),
		chromedp.Text(`#progress`, &pageText),
		shot(t, "kiln-ui-progress-failed-run.png"),
	)
	p := run.Status.Progress
	if p == nil || p.Total != 3 || p.Failed != 1 {
		t.Fatalf("the API's progress is %+v, want 3 tasks, 1 failed", p)
	}
	want := float64(p.Failed) / float64(p.Total)
	if math.Abs(listShare-want) > 0.03 || math.Abs(pageShare-want) > 0.03 {
		t.Errorf("the red segment is %.3f of the list's bar and %.3f of the page's, want %.3f (failed/total)", listShare, pageShare, want)
	}
	if colour != "rgb(198, 40, 40)" {
		t.Errorf("the failed segment's colour is %s, want red", colour)
	}
	if okCount != 2 || strings.TrimSpace(listText) != "3/3" || !strings.Contains(pageText, "3/3 done: 2 succeeded, 1 failed") {
		t.Errorf("the bars read %d succeeded, list %q, page %q", okCount, listText, pageText)
	}
}

// TestWebUIDialogsCloseWhenTheAddressChanges: the submit form and a
// question close when one goes to another page; a question closed so is
// answered no (the run stays).
func TestWebUIDialogsCloseWhenTheAddressChanges(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	base, admin, run := mixedRun(t)
	var afterSubmit, afterConfirm int
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		chromedp.WaitVisible(`#new-run`),
		chromedp.Click(`#new-run`),
		chromedp.WaitVisible(`dialog#submit`),
		chromedp.Evaluate(`location.hash = "#/runs/`+string(run.ID)+`"`, nil),
		waitJS(`document.querySelector("h2 .phase.Failed") !== null`),
		chromedp.Evaluate(`document.querySelectorAll("dialog").length`, &afterSubmit),
		chromedp.Click(`#actions button[data-action="delete"]`),
		chromedp.WaitVisible(`dialog#confirm`),
		chromedp.Evaluate(`history.back()`, nil),
		waitJS(`document.getElementById("runs") !== null`),
		waitJS(`document.querySelectorAll("dialog").length === 0`),
		chromedp.Evaluate(`document.querySelectorAll("dialog").length`, &afterConfirm),
		shot(t, "kiln-ui-dialogs-closed.png"),
	)
	if afterSubmit != 0 || afterConfirm != 0 {
		t.Errorf("after the address changed %d and %d dialogs were open, want none", afterSubmit, afterConfirm)
	}
	if _, code := apiRun(t, base, admin, run.ID); code != 200 {
		t.Errorf("the question closed by Back deleted the run: GET answers %d", code)
	}
}

// TestWebUISaysWhereToFindAToken: without a token the page says the
// server needs one, where its admin token is and how to make one, with
// the token box focused and no page to move to; a refused token says so
// and can be forgotten; a good one lists the runs.
func TestWebUISaysWhereToFindAToken(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	postRun(t, base, admin, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: one}\nspec:\n  tasks:\n  - {name: a, command: [\"true\"]}\n")
	var none, bad, forgotten string
	var focus string
	var disabled, forgetShown, forgetAfter, stored, panelAfter, formOnRefusal, formAfter, forgetLoggedIn bool
	var who string
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/#/"),
		chromedp.WaitVisible(`#auth`),
		chromedp.Text(`#auth`, &none),
		chromedp.Evaluate(`document.activeElement.id`, &focus),
		chromedp.Evaluate(`[...document.querySelectorAll("#pager button")].every((b) => b.disabled)`, &disabled),
		chromedp.Evaluate(`!document.getElementById("forget").hidden`, &forgetShown),
		shot(t, "kiln-ui-no-token.png"),
		chromedp.Navigate(base+"/?token=bogus#/"),
		waitJS(`!document.getElementById("auth").hidden && document.getElementById("auth").textContent.includes("refused")`),
		chromedp.Text(`#auth`, &bad),
		chromedp.Evaluate(`document.getElementById("login").checkVisibility()`, &formOnRefusal),
		shot(t, "kiln-ui-bad-token.png"),
		chromedp.Click(`#forget`),
		waitJS(`!document.getElementById("auth").hidden && document.getElementById("auth").textContent.includes("needs an API token")`),
		chromedp.Text(`#auth`, &forgotten),
		chromedp.Evaluate(`localStorage.getItem("kiln-token") !== null`, &stored),
		chromedp.Evaluate(`!document.getElementById("forget").hidden`, &forgetAfter),
		chromedp.SendKeys(`#token`, admin),
		chromedp.Click(`#login button`),
		waitJS(`document.querySelector("#runs tr[data-run]") !== null`),
		chromedp.Evaluate(`document.getElementById("auth").hidden`, &panelAfter),
		waitJS(`document.getElementById("who").textContent.includes("admin")`),
		chromedp.Evaluate(`document.getElementById("login").checkVisibility()`, &formAfter),
		chromedp.Evaluate(`document.getElementById("forget").checkVisibility()`, &forgetLoggedIn),
		chromedp.Text(`#who`, &who),
		shot(t, "kiln-ui-token-used.png"),
	)
	if !formOnRefusal || formAfter || !forgetLoggedIn {
		t.Errorf("the token form shown: %v when the token was refused, %v once one was taken (Forget token %v, header %q); want true, false, true",
			formOnRefusal, formAfter, forgetLoggedIn, who)
	}
	for _, want := range []string{"This kiln server needs an API token", "KILN_HOME/admin.token", "kiln token create NAME --role viewer"} {
		if !strings.Contains(none, want) {
			t.Errorf("without a token the panel reads %q, want %q in it", none, want)
		}
	}
	if focus != "token" || !disabled || forgetShown {
		t.Errorf("without a token: focus on %q, paging disabled %v, Forget token shown %v; want token, true, false", focus, disabled, forgetShown)
	}
	if !strings.Contains(bad, "KLN-4003") || !strings.Contains(bad, "KILN_HOME/admin.token") {
		t.Errorf("with a bad token the panel reads %q", bad)
	}
	if stored || forgetAfter || !strings.Contains(forgotten, "needs an API token") {
		t.Errorf("after Forget token: token kept %v, the button shown %v, the panel %q", stored, forgetAfter, forgotten)
	}
	if !panelAfter {
		t.Errorf("with the admin token the panel still shows")
	}
}

// TestWebUIShowsALogAndTellsDurationsApart: the Logs tab shows a log at
// once (the first task's, then the selected one's); the task's panel says
// its time is the task's, from its first start to its end, with its
// attempts, and the attempts table's column is each attempt's own.
func TestWebUIShowsALogAndTellsDurationsApart(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	base, admin, run := mixedRun(t)
	var first, chosen, picked, times, heads string
	var taskSpan, attemptSpan []string
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)+"?tab=logs"),
		waitJS(`(document.querySelector("#log") || {}).textContent?.includes("hello from ok1")`),
		chromedp.Text(`#log`, &first),
		chromedp.Value(`#log-node`, &picked),
		shot(t, "kiln-ui-logs-tab-first.png"),
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)+"?node="+longTask+"&tab=logs"),
		waitJS(`(document.querySelector("#log") || {}).textContent?.includes("failing now")`),
		chromedp.Text(`#log`, &chosen),
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)+"?node="+longTask),
		chromedp.WaitVisible(`#panel #attempts tr[data-attempt="2"]`),
		chromedp.Text(`#panel .node-times`, &times),
		chromedp.Text(`#panel #attempts tr:first-child`, &heads),
		chromedp.Evaluate(`(() => { const s = document.querySelector("#panel .node-times .duration"); return [s.dataset.since, s.dataset.until]; })()`, &taskSpan),
		chromedp.Evaluate(`(() => { const s = document.querySelector('#attempts tr[data-attempt="2"] td.took .duration'); return [s.dataset.since, s.dataset.until]; })()`, &attemptSpan),
		shot(t, "kiln-ui-task-durations.png"),
	)
	if strings.TrimSpace(first) != "hello from ok1" || picked != "ok1" {
		t.Errorf("the Logs tab with no task selected shows %q for %q, want ok1's log", first, picked)
	}
	if !strings.Contains(chosen, "failing now") {
		t.Errorf("the Logs tab of the selected task shows %q", chosen)
	}
	if !strings.Contains(times, "task took ") || !strings.HasSuffix(times, "(2 attempts)") {
		t.Errorf("the task's times read %q, want \"task took … (2 attempts)\"", times)
	}
	if !strings.Contains(heads, "Attempt took") || strings.Contains(heads, "Duration") {
		t.Errorf("the attempts table's heads read %q, want an \"Attempt took\" column", heads)
	}
	// The labels say what they measure: the task's line spans the task's
	// times, the attempt's cell its own.
	var n apiv1.NodeStatus
	for _, x := range run.Status.Nodes {
		if x.Name == longTask {
			n = x
		}
	}
	if len(n.Attempts) != 2 {
		t.Fatalf("the API's task has %d attempts, want 2", len(n.Attempts))
	}
	a := n.Attempts[1]
	if !sameTimes(taskSpan, n.StartedAt, n.FinishedAt) || !sameTimes(attemptSpan, a.StartedAt, a.FinishedAt) {
		t.Errorf("the task's duration spans %v (API %v to %v), the attempt's %v (API %v to %v)", taskSpan, n.StartedAt, n.FinishedAt,
			attemptSpan, a.StartedAt, a.FinishedAt)
	}
}

// sameTimes reports whether got holds the times start and end.
func sameTimes(got []string, start, end *time.Time) bool {
	if len(got) != 2 || start == nil || end == nil {
		return false
	}
	s, err1 := time.Parse(time.RFC3339Nano, got[0])
	e, err2 := time.Parse(time.RFC3339Nano, got[1])
	return err1 == nil && err2 == nil && s.Equal(*start) && e.Equal(*end)
}

// TestWebUIFitsANarrowWindow: at 700px the runs table scrolls in its box
// and the page does not; a row is one line, its message cut with the
// full text on hover; the time filters' placeholders fit their boxes; and
// the timeline cuts a long task name, never its attempt's number.
func TestWebUIFitsANarrowWindow(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	base, admin, run := mixedRun(t)
	row := `tr[data-run="` + string(run.ID) + `"]`
	var wrapScrolls, pageFits, placeholdersFit, numShown bool
	var rowHeight float64
	var message, title, num string
	uiSteps(ctx, t,
		chromedp.EmulateViewport(700, 900),
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		chromedp.WaitVisible(row),
		chromedp.Evaluate(`(() => { const w = document.getElementById("runs-wrap"); return w.scrollWidth > w.clientWidth; })()`, &wrapScrolls),
		chromedp.Evaluate(`document.documentElement.scrollWidth <= document.documentElement.clientWidth && document.documentElement.clientWidth <= innerWidth`, &pageFits),
		chromedp.Evaluate(`document.querySelector('`+row+`').getBoundingClientRect().height`, &rowHeight),
		chromedp.Evaluate(`document.querySelector('`+row+` td.message').textContent`, &message),
		chromedp.Evaluate(`document.querySelector('`+row+` td.message').title`, &title),
		chromedp.Evaluate(`["since", "until"].every((k) => { const i = document.querySelector("form.filters input[name=" + k + "]"), s = getComputedStyle(i);
  const c = document.createElement("canvas").getContext("2d"); c.font = s.font;
  return c.measureText(i.placeholder).width <= i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight); })`, &placeholdersFit),
		shot(t, "kiln-ui-narrow-runs.png"),
		chromedp.Navigate(base+"/#/runs/"+string(run.ID)+"?tab=timeline"),
		waitJS(`document.querySelector('#timeline .tl-row[data-attempt="2"] .tl-num') !== null`),
		chromedp.Text(`#timeline .tl-row[data-attempt="2"] .tl-num`, &num),
		chromedp.Evaluate(`(() => { const l = document.querySelector('#timeline .tl-row[data-attempt="2"] .tl-label').getBoundingClientRect(),
  n = document.querySelector('#timeline .tl-row[data-attempt="2"] .tl-num').getBoundingClientRect(); return n.width > 0 && n.right <= l.right + 0.5; })()`, &numShown),
		shot(t, "kiln-ui-narrow-timeline.png"),
	)
	if !wrapScrolls || !pageFits {
		t.Errorf("at 700px the table's box scrolls: %v, the page fits the window: %v; want both", wrapScrolls, pageFits)
	}
	if rowHeight > 40 {
		t.Errorf("a run's row is %.0fpx tall, want one line", rowHeight)
	}
	if message == "" || title != message {
		t.Errorf("the message cell reads %q with the tooltip %q, want the full message in both", message, title)
	}
	if !placeholdersFit {
		t.Errorf("the since and until placeholders do not fit their boxes")
	}
	if strings.TrimSpace(num) != "#2" || !numShown {
		t.Errorf("the long task's timeline label shows its number %q visible %v, want #2 shown", num, numShown)
	}
}
