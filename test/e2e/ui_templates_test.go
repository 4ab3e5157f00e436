package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestWebUILaunchesAStoredTemplate stores a WorkflowTemplate with two
// params, one without a default, and launches it from the web UI: the
// templates page lists it, its form has a field per param (the default
// filled in, the other required and not sent empty), and the launched run
// has the params typed and runs the template's tasks with them.
func TestWebUILaunchesAStoredTemplate(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	if code, body := apiPost(t, base, admin, "/api/v1/templates?project=default", `apiVersion: kiln.dev/v1alpha1
kind: WorkflowTemplate
metadata: {name: train-eval}
spec:
  params:
  - {name: model, default: resnet}
  - {name: epochs, description: how many passes over the data}
  tasks:
  - name: fit
    command: [sh, -c, 'echo -n "$0-$1" > $KILN_OUTPUTS/said', '{{params.model}}', '{{params.epochs}}']
    outputs: {parameters: [{name: said}]}
`); code != http.StatusOK {
		t.Fatalf("storing the template: %d %s", code, body)
	}

	var listed, modelValue string
	var id apiv1.RunID
	var epochsRequired, blocked bool
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/"),
		chromedp.WaitVisible(`#runs`),
		chromedp.Click(`header a.nav-link`),
		chromedp.WaitVisible(`#templates tr[data-template="train-eval"]`),
		chromedp.Text(`#templates tr[data-template="train-eval"]`, &listed),
		shot(t, "kiln-ui-templates.png"),
		chromedp.Click(`#templates tr[data-template="train-eval"] a`),
		chromedp.WaitVisible(`#launch-form input[data-param="epochs"]`),
		chromedp.Value(`#launch-form input[data-param="model"]`, &modelValue),
		chromedp.Evaluate(`document.querySelector('#launch-form input[data-param="epochs"]').required`, &epochsRequired),
		chromedp.Click(`#launch`), // epochs is empty: the browser keeps the form
		chromedp.Evaluate(`location.hash.startsWith("#/templates/train-eval") && !document.querySelector('#launch-form input[data-param="epochs"]').validity.valid`, &blocked),
		clearField(`#launch-form input[name=model]`),
		chromedp.SendKeys(`#launch-form input[data-param="model"]`, "vit"),
		chromedp.SendKeys(`#launch-form input[data-param="epochs"]`, "3"),
		shot(t, "kiln-ui-launch-form.png"),
		chromedp.Click(`#launch`),
		waitJS(`location.hash.startsWith("#/runs/") && document.querySelector("h2 .phase.Succeeded") !== null`),
		shot(t, "kiln-ui-launched.png"),
		chromedp.ActionFunc(func(ctx context.Context) (err error) { id, err = pageRun(ctx); return err }),
	)
	if !strings.Contains(listed, "train-eval") || !strings.Contains(listed, "model, epochs") {
		t.Errorf("the templates page lists %q, want train-eval with its params", listed)
	}
	if modelValue != "resnet" || !epochsRequired || !blocked {
		t.Errorf("the form's model reads %q, epochs required %v, launch without it held %v; want resnet, true, true", modelValue, epochsRequired, blocked)
	}
	run, _ := apiRun(t, base, admin, id)
	if run.Params["model"] != "vit" || run.Params["epochs"] != "3" || run.Name != "train-eval" {
		t.Errorf("the launched run %s is %q with params %v; want train-eval with model=vit, epochs=3", id, run.Name, run.Params)
	}
	if fit := nodeOf(t, &run, "fit"); run.Status.Phase != apiv1.PhaseSucceeded || fit.Outputs["said"] != "vit-3" {
		t.Errorf("the launched run is %s, its task said %q; want Succeeded and vit-3", run.Status.Phase, fit.Outputs["said"])
	}
	var runs apiv1.RunList
	apiGetJSON(t, base, admin, "/api/v1/runs", &runs)
	if len(runs.Items) != 1 {
		t.Errorf("the server holds %d runs, want only the one launched (the form without epochs sent nothing)", len(runs.Items))
	}
}
