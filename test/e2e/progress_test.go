package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// listedProgress is run id's progress as GET /api/v1/runs lists it.
func listedProgress(t *testing.T, base, token string, id apiv1.RunID) *apiv1.RunProgress {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/api/v1/runs", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page apiv1.RunList
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Items {
		if r.ID == id {
			return r.Status.Progress
		}
	}
	t.Fatalf("GET /api/v1/runs does not list %s", id)
	return nil
}

// progressCell is the PROGRESS cell of run id in `kiln get runs`.
func progressCell(t *testing.T, out string, id apiv1.RunID) string {
	t.Helper()
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[0], "PROGRESS") {
		t.Fatalf("kiln get runs has no PROGRESS column:\n%s", out)
	}
	col := strings.Index(lines[0], "PROGRESS")
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, string(id)+" ") && len(l) > col {
			return strings.Fields(l[col:])[0]
		}
	}
	t.Fatalf("kiln get runs does not list %s:\n%s", id, out)
	return ""
}

// TestProgressCountsMapChildren runs a workflow with a map of four items
// behind a task, before a last task, and reads its progress while the
// items run and at the end: from the API's list of runs, `kiln get runs`
// and `kiln describe`, on the server and on the home itself.
func TestProgressCountsMapChildren(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	release := filepath.Join(sharedDir(t), "release")
	run := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: progress}
spec:
  tasks:
  - {name: prep, command: ["true"]}
  - name: each
    dependsOn: [prep]
    forEach: {range: {count: 4}}
    resources: {cpu: 100m}
    command: [sh, -c, 'while [ ! -e `+release+` ]; do sleep 0.05; done']
  - {name: last, dependsOn: [each], command: ["true"]}
`)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	other := t.TempDir()

	// Before each expands it counts as one task; then as its four items.
	mid := apiv1.RunProgress{Total: 6, Done: 1, Succeeded: 1, Running: 4}
	for deadline := time.Now().Add(60 * time.Second); ; <-time.After(20 * time.Millisecond) {
		p := listedProgress(t, base, admin, run.ID)
		if p != nil && *p == mid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("while the items run the API lists progress %+v, want %+v", p, mid)
		}
	}
	for name, env := range map[string][]string{"served": client, "embedded": nil} {
		h := other
		if env == nil {
			h = home
		}
		if got := progressCell(t, kilnWithEnv(t, env, h, "get", "runs").stdout, run.ID); got != "1/6" {
			t.Errorf("%s: kiln get runs shows %q while the items run, want 1/6", name, got)
		}
		if d := kilnWithEnv(t, env, h, "describe", "run", string(run.ID)).stdout; !strings.Contains(d, "Progress:  1/6 tasks done (1 succeeded), 4 running\n") {
			t.Errorf("%s: describe while the items run:\n%s", name, d)
		}
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitServed(t, base, admin, run.ID, apiv1.PhaseSucceeded)

	end := apiv1.RunProgress{Total: 6, Done: 6, Succeeded: 6}
	if p := listedProgress(t, base, admin, run.ID); p == nil || *p != end {
		t.Errorf("the API lists the run's progress as %+v, want %+v", p, end)
	}
	if got := describe(t, home, run.ID).Status.Progress; got == nil || *got != end {
		t.Errorf("describe -o json shows progress %+v, want %+v", got, end)
	}
	if got := progressCell(t, kilnWithEnv(t, client, other, "get", "runs").stdout, run.ID); got != "6/6" {
		t.Errorf("kiln get runs shows %q at the end, want 6/6", got)
	}
	if d := kiln(t, home, "describe", "run", string(run.ID)).stdout; !strings.Contains(d, "Progress:  6/6 tasks done (6 succeeded)\n") {
		t.Errorf("describe at the end:\n%s", d)
	}
}

// progressScript is a training script that reports its progress to
// $KILN_PROGRESS as Kubeflow Trainer's trainerStatus, by atomic rename;
// told to, it leaves a half-written report, then waits to be released.
const progressScript = `
import json, os, sys, time
dir = sys.argv[1]
path = os.environ["KILN_PROGRESS"]
with open(path + ".tmp", "w") as f:
    json.dump({"progressPercentage": 40, "estimatedRemainingSeconds": 90, "metrics": {"loss": 0.25, "epoch": 2}}, f)
os.replace(path + ".tmp", path)
while not os.path.exists(os.path.join(dir, "garble")):
    time.sleep(0.05)
with open(path, "w") as f:
    f.write('{"progressPercen')
open(os.path.join(dir, "garbled"), "w").close()
while not os.path.exists(os.path.join(dir, "release")):
    time.sleep(0.05)
`

// TestATrainingScriptReportsItsProgress serves a TrainJob whose Python
// script, run as its project's account, writes its progress: describe
// shows its percent and ETA while it runs, keeps them through a
// half-written report, and shows 100% once the job succeeded.
func TestATrainingScriptReportsItsProgress(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	dir := sharedDir(t)
	script := writeFile(t, dir, "train.py", progressScript)
	id := postRun(t, base, admin, `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: reporter}
spec:
  runtimeRef: {name: plain}
  trainer: {command: [/usr/bin/python3, `+script+`, `+dir+`], resourcesPerNode: {cpu: 100m}}
`).ID
	reported := regexp.MustCompile(`(?m)^  Progress: 40%, ETA 1m30s, epoch=2 loss=0.25 \(reported [0-9-]+ [0-9:]+\)$`)
	var text string
	waitFor(t, "the job's report in describe", func() bool {
		text = kiln(t, home, "describe", "run", string(id)).stdout
		return reported.MatchString(text)
	})
	if !strings.Contains(text, "Progress:  0/1 task done, 1 running\n") {
		t.Errorf("describe of the running job lacks the run's progress:\n%s", text)
	}
	if err := os.WriteFile(filepath.Join(dir, "garble"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the half-written report", func() bool { _, err := os.Stat(filepath.Join(dir, "garbled")); return err == nil })
	<-time.After(2500 * time.Millisecond) // the engine reads reports every 2 seconds
	if text = kiln(t, home, "describe", "run", string(id)).stdout; !reported.MatchString(text) {
		t.Errorf("after a half-written report describe no longer shows the last good one:\n%s", text)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitServed(t, base, admin, id, apiv1.PhaseSucceeded)
	got := describe(t, home, id)
	ts := got.Status.Nodes[0].TrainerStatus
	if got.Status.Phase != apiv1.PhaseSucceeded || ts == nil || *ts.ProgressPercentage != 100 || *ts.EstimatedRemainingSeconds != 0 {
		t.Fatalf("run %s, trainer status %+v; want Succeeded at 100%%", got.Status.Phase, ts)
	}
	if text = kiln(t, home, "describe", "run", string(id)).stdout; !strings.Contains(text, "  Progress: 100%, ETA 0s, epoch=2 loss=0.25") ||
		!strings.Contains(text, "Progress:  1/1 task done (1 succeeded)\n") {
		t.Errorf("describe of the finished job:\n%s", text)
	}
}
