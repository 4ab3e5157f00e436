package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestWebUIShowsATrainingJob runs a two-process training job on a server
// with one cpu, behind a task that holds it: its panel says why it waits
// in the queue (the node's message in the API), then, after a failed
// first attempt, its restart, its replica group with a mark per running
// process, its conditions with their times, and the progress it reports.
func TestWebUIShowsATrainingJob(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	home := newHome(t)
	base, admin, _ := startServeAs(t, home, nil, nil, "--cpus", "1")
	dir := sharedDir(t)
	hold, finish := filepath.Join(dir, "hold"), filepath.Join(dir, "finish")
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: training-ui}
spec:
  tasks:
  - {name: hog, resources: {cpu: "1"}, command: [sh, -c, 'while [ ! -e `+hold+` ]; do sleep 0.05; done']}
  - name: fit
    retries: {limit: 1}
    train:
      runtime: plain
      numNodes: 2
      resourcesPerNode: {cpu: 500m}
      command: [sh, -c, 'if [ "$KILN_ATTEMPT" = 1 ]; then exit 1; fi; printf "{\"progressPercentage\": 50}" > $KILN_PROGRESS.$$; mv $KILN_PROGRESS.$$ $KILN_PROGRESS; while [ ! -e `+finish+` ]; do sleep 0.05; done']
`)
	waiting := waitAPIRun(t, base, admin, run.ID, "the training job waiting for the cpu", func(r apiv1.Run) bool {
		n := r.Status.Node("fit")
		return n != nil && n.Phase == apiv1.PhaseWaiting
	})
	var queue string
	uiSteps(ctx, t,
		chromedp.Navigate(base+"/?token="+admin+"#/runs/"+string(run.ID)+"?node=fit"),
		chromedp.WaitVisible(`#panel #queue-reason`),
		chromedp.Text(`#panel #queue-reason`, &queue),
		shot(t, "kiln-ui-training-queued.png"),
	)
	if msg := waiting.Status.Node("fit").Message; !strings.HasPrefix(queue, "Waiting in the queue") || !strings.Contains(queue, msg) {
		t.Errorf("the queued job's panel reads %q, want the node's message %q", queue, msg)
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	running := waitAPIRun(t, base, admin, run.ID, "the second attempt running with its progress", func(r apiv1.Run) bool {
		n := r.Status.Node("fit")
		return n != nil && len(n.Attempts) == 2 && n.TrainerStatus != nil && len(n.Replicas) > 0 && n.Replicas[0].Active == 2
	})
	fit := running.Status.Node("fit")
	var restarts, trainer string
	var pips int
	var conds []map[string]string
	uiSteps(ctx, t,
		waitJS(`(document.querySelector("#trainer-status") || {}).textContent?.includes("50%")`),
		waitJS(`document.querySelectorAll('#replicas tr[data-group="`+fit.Replicas[0].Name+`"] .pip.Running').length === 2`),
		chromedp.Text(`#restarts`, &restarts),
		chromedp.Text(`#trainer-status`, &trainer),
		chromedp.Evaluate(`document.querySelectorAll("#replicas .pip").length`, &pips),
		chromedp.Evaluate(`[...document.querySelectorAll("#conditions tr[data-type]")].map((tr) => ({type: tr.dataset.type,
			status: tr.dataset.status, at: tr.querySelector("time")?.getAttribute("datetime") || ""}))`, &conds),
		shot(t, "kiln-ui-training-running.png"),
	)
	if !strings.HasPrefix(restarts, "Restarts: 1") {
		t.Errorf("the panel reads %q, want one restart", restarts)
	}
	if !strings.HasPrefix(trainer, "Progress: 50%") {
		t.Errorf("the panel's progress reads %q", trainer)
	}
	if pips != 2 {
		t.Errorf("the replica group shows %d process marks, want 2", pips)
	}
	checkConditions(t, base, admin, run.ID, conds)
	if err := os.WriteFile(finish, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var succeeded int
	uiSteps(ctx, t,
		waitJS(`document.querySelectorAll('#replicas .pip.Succeeded').length === 2`),
		chromedp.Evaluate(`+document.querySelector('#replicas tr[data-group] td.succeeded').textContent`, &succeeded),
		shot(t, "kiln-ui-training-done.png"),
	)
	if succeeded != 2 {
		t.Errorf("the replica group counts %d succeeded, want 2", succeeded)
	}
}

// checkConditions checks that the panel's conditions are the API's, with their times.
func checkConditions(t *testing.T, base, admin string, id apiv1.RunID, shown []map[string]string) {
	t.Helper()
	r, _ := apiRun(t, base, admin, id)
	want := r.Status.Node("fit").Conditions
	if len(want) == 0 {
		t.Fatal("the API records no conditions of the training job")
	}
	got := map[string]string{}
	for _, c := range shown {
		got[c["type"]+"="+c["status"]] = c["at"]
	}
	for _, c := range want {
		at, ok := got[c.Type+"="+c.Status]
		if !ok {
			t.Errorf("the panel lacks the condition %s=%s; it shows %v", c.Type, c.Status, shown)
			continue
		}
		if v, err := time.Parse(time.RFC3339Nano, at); err != nil || !v.Equal(c.LastTransitionTime) {
			t.Errorf("the condition %s shows the time %q, want %s", c.Type, at, c.LastTransitionTime.Format(time.RFC3339Nano))
		}
	}
	t.Logf("the panel shows the conditions %v", shown)
}
