package e2e

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// spinner is a workflow with a parameter and a training job that runs
// until it is stopped: one that can be suspended, resumed and cancelled.
const spinner = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: spinner}
spec:
  params: [{name: greeting, default: "none"}]
  tasks:
  - name: spin
    train: {runtime: plain, command: [sh, -c, 'echo {{params.greeting}}; while :; do sleep 0.1; done'], resourcesPerNode: {cpu: 100m}}
`

// TestWebUISubmitsAndSteersARun submits a run from the page (a YAML
// pasted, with a parameter) and clicks each of its buttons: Suspend,
// Resume, Cancel (first kept by the dialog, then confirmed), Retry, and
// Delete; after each click the API's record is as the click said. A
// file picked submits too, and a bad YAML shows the API's KLN error.
func TestWebUISubmitsAndSteersARun(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	var id apiv1.RunID
	readID := chromedp.ActionFunc(func(ctx context.Context) (err error) { id, err = pageRun(ctx); return err })
	onRun := func(ok func(apiv1.Run) bool, what string) chromedp.Action {
		return chromedp.ActionFunc(func(context.Context) error {
			waitAPIRun(t, base, admin, id, what, ok)
			return nil
		})
	}
	click := func(action string) chromedp.Action {
		return chromedp.Click(`#actions button[data-action="` + action + `"]`)
	}
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		chromedp.WaitVisible(`#new-run`),
		chromedp.Click(`#new-run`),
		chromedp.WaitVisible(`dialog#submit textarea#submit-yaml`),
		chromedp.SetValue(`#submit-yaml`, spinner),
		chromedp.SetValue(`#submit-params`, "greeting=hello-from-the-form"),
		shot(t, "kiln-ui-submit-dialog.png"),
		chromedp.Click(`dialog#submit .submit-go`),
		waitJS(`location.hash.startsWith("#/runs/")`),
		readID,
		waitJS(node("spin", "Running")),
		onRun(func(r apiv1.Run) bool { return r.Params["greeting"] == "hello-from-the-form" }, "the submitted run with its parameter"),

		chromedp.Click(`#actions button[data-action="suspend"]`),
		onRun(func(r apiv1.Run) bool { return r.Suspend && r.Status.Phase == apiv1.PhaseSuspended }, "the run suspended"),
		chromedp.WaitVisible(`#actions button[data-action="unsuspend"]`),
		click("unsuspend"),
		onRun(func(r apiv1.Run) bool { return !r.Suspend && r.Status.Phase == apiv1.PhaseRunning }, "the run resumed"),
		waitJS(`document.querySelector("h2 .phase.Running") !== null && document.querySelector('#actions button[data-action="suspend"]') !== null`),

		// Cancel asks first: "Keep it" leaves the run as it is.
		click("cancel"),
		chromedp.WaitVisible(`dialog#confirm .confirm-ok`),
		shot(t, "kiln-ui-confirm-cancel.png"),
		chromedp.Click(`dialog#confirm .confirm-cancel`),
		waitJS(`document.querySelector("dialog#confirm") === null`),
		onRun(func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseRunning }, "the run still running after Keep it"),
		click("cancel"),
		chromedp.Click(`dialog#confirm .confirm-ok`),
		onRun(func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseCancelled }, "the run cancelled"),
		waitJS(`document.querySelector("h2 .phase.Cancelled") !== null`),

		click("retry"),
		onRun(func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseRunning }, "the retried run running again"),
		waitJS(`document.querySelector("h2 .phase.Running") !== null`),
		click("cancel"),
		chromedp.Click(`dialog#confirm .confirm-ok`),
		onRun(func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseCancelled }, "the run cancelled again"),
		shot(t, "kiln-ui-actions-cancelled.png"),

		// Rerun from a task: a new run that says it reruns this one; cancelled, the old one is deleted.
		chromedp.Click(`g.node[data-name="spin"] rect`),
		chromedp.WaitVisible(`#panel button.rerun`),
		chromedp.Click(`#panel button.rerun`),
		waitJS(`document.querySelector("p.rerun-of") !== null`),
		chromedp.ActionFunc(func(ctx context.Context) error {
			src := id
			if _, err := pageRun(ctx); err != nil {
				return err
			}
			id, _ = pageRun(ctx)
			r := waitAPIRun(t, base, admin, id, "the rerun running", func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseRunning })
			if id == src || r.RerunOf == nil || r.RerunOf.Run != src || r.RerunOf.Node != "spin" {
				t.Errorf("Rerun from here made %s, a rerun of %+v; want a new run, a rerun of %s from spin", id, r.RerunOf, src)
			}
			if err := chromedp.Run(ctx, click("cancel"), chromedp.Click(`dialog#confirm .confirm-ok`)); err != nil {
				return err
			}
			waitAPIRun(t, base, admin, id, "the rerun cancelled", func(r apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseCancelled })
			id = src
			return chromedp.Navigate(base + "/#/runs/" + string(src)).Do(ctx)
		}),
		waitJS(`document.querySelector('#actions button[data-action="delete"]') !== null`),
		click("delete"),
		chromedp.Click(`dialog#confirm .confirm-ok`),
		waitJS(`location.hash === "#/"`),
	)
	if _, code := apiRun(t, base, admin, id); code != http.StatusNotFound {
		t.Errorf("after Delete, GET /api/v1/runs/%s answers %d, want 404", id, code)
	}

	// A file picked submits too; a YAML that is not a workflow shows why, with its code.
	file := writeFile(t, t.TempDir(), "picked.yaml", strings.Replace(spinner, "name: spinner", "name: picked", 1))
	var refused string
	uiSteps(ctx, t,
		chromedp.Click(`#new-run`),
		chromedp.WaitVisible(`#submit-yaml`),
		chromedp.SetValue(`#submit-yaml`, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: broken}\nspec:\n  tasks:\n  - name: x\n    comand: [\"true\"]\n"),
		chromedp.Click(`dialog#submit .submit-go`),
		chromedp.WaitVisible(`dialog#submit .result.error`),
		chromedp.Text(`dialog#submit .result.error`, &refused),
		shot(t, "kiln-ui-submit-refused.png"),
		clearField(`#submit-yaml`),
		chromedp.SetUploadFiles(`#submit-files`, []string{file}),
		chromedp.Click(`dialog#submit .submit-go`),
		waitJS(`location.hash.startsWith("#/runs/")`),
		readID,
	)
	// The spec's mistake is shown where it is, as the CLI shows it: file:line:column.
	if !strings.Contains(refused, "KLN-") || !regexp.MustCompile(`pasted\.yaml:7:5\b`).MatchString(refused) {
		t.Errorf("the refused submission shows %q, want the API's KLN code and message at pasted.yaml:7:5", refused)
	}
	if r, _ := apiRun(t, base, admin, id); r.Name != "picked" || r.Workflow == nil {
		t.Errorf("the run submitted from a picked file is %q, want picked", r.Name)
	}
}

// TestWebUIGatesAskBeforeRejectingAndViewersSeeNoButtons: a viewer's
// pages show no button that changes anything; an editor's Reject asks
// first, and once confirmed the API records the gate rejected.
func TestWebUIGatesAskBeforeRejectingAndViewersSeeNoButtons(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: gated-ui}
spec:
  tasks:
  - {name: first, command: ["true"]}
  - name: ship
    dependsOn: [first]
    gate: {approve: {message: "ship it?"}}
`)
	viewer := viewerToken(t, home)
	gate := `section.gate.waiting[data-gate="ship"]`
	var buttons, listButtons int
	var who string
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+viewer+"#/runs/"+string(run.ID)),
		chromedp.WaitVisible(gate),
		waitJS(node("first", "Succeeded")),
		chromedp.Click(`g.node[data-name="first"] rect`),
		chromedp.WaitVisible(`#panel`),
		// Buttons that change nothing (the graph's zoom, closing the panel) do not count.
		chromedp.Evaluate(`[...document.querySelectorAll("#view button")].filter((b) => !b.closest("#graph") && !b.matches(".panel-close")).length`, &buttons),
		shot(t, "kiln-ui-viewer-no-buttons.png"),
		chromedp.Navigate(base+"/#/"),
		chromedp.WaitVisible(`tr[data-run="`+string(run.ID)+`"]`),
		chromedp.Evaluate(`document.querySelectorAll("#new-run, #view h2 button").length`, &listButtons),
		chromedp.Text(`#who`, &who),
	)
	if buttons != 0 || listButtons != 0 {
		t.Errorf("a viewer sees %d buttons on a run's page and %d on the list, want none", buttons, listButtons)
	}
	t.Logf("the header says who the viewer is: %q", who)

	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)),
		chromedp.WaitVisible(gate+" button.reject"),
		chromedp.SendKeys(gate+" input.reason", "not today"),
		chromedp.Click(gate+" button.reject"),
		chromedp.WaitVisible(`dialog#confirm .confirm-ok`),
		chromedp.Click(`dialog#confirm .confirm-ok`),
		waitJS(`document.querySelector('p.gate.decided[data-gate="ship"]') !== null`),
		shot(t, "kiln-ui-gate-rejected.png"),
	)
	got := waitAPIRun(t, base, admin, run.ID, "the rejected gate recorded", func(r apiv1.Run) bool {
		n := r.Status.Node("ship")
		return n != nil && n.Gate != nil && n.Gate.Decision != ""
	})
	if g := got.Status.Node("ship").Gate; g.Decision != "rejected" || g.Reason != "not today" {
		t.Errorf("the API records the gate %+v, want rejected for %q", g, "not today")
	}
}
