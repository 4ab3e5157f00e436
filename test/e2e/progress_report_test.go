package e2e

import (
	"fmt"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestTheLastProgressReportBeforeExitIsKept: a plain task and a training
// job's rank each write a progress report to $KILN_PROGRESS just before
// they exit; describe and the API keep it (the engine reads the file
// once more as the attempt ends, not only every few seconds).
func TestTheLastProgressReportBeforeExitIsKept(t *testing.T) {
	t.Parallel()
	home, dir := newHome(t), t.TempDir()
	report := func(loss string) string {
		return fmt.Sprintf(`printf '{"progressPercentage": 90, "metrics": {"loss": %s}}' > "$KILN_PROGRESS"`, loss)
	}
	wf := writeFile(t, dir, "wf.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: reports}
spec:
  tasks:
  - name: prep
    command: [sh, -c, %q]
  - name: fit
    train:
      runtime: plain
      numNodes: 1
      command: [sh, -c, %q]
      resourcesPerNode: {cpu: 100m}
`, "test -n \"$KILN_PROGRESS\" && "+report("0.5")+" && exit 3", report("0.25")))
	if r := kiln(t, home, "run", "-q", wf); r.code != 1 {
		t.Fatalf("kiln run exited %d, want 1 (prep fails on purpose): %s", r.code, r.stderr)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	// A job that succeeded is done: 100%, whatever it said last.
	for name, want := range map[string]struct {
		percent int32
		loss    string
	}{"prep": {90, "0.5"}, "fit": {100, "0.25"}} {
		ts := nodeNamed(t, run, name).TrainerStatus
		if ts == nil || ts.ProgressPercentage == nil || *ts.ProgressPercentage != want.percent || len(ts.Metrics) != 1 || ts.Metrics[0] != (apiv1.Metric{Name: "loss", Value: want.loss}) {
			t.Errorf("%s's last report is %+v; want %d%% with loss %s", name, ts, want.percent, want.loss)
		}
	}
	if text := kiln(t, home, "describe", "run", string(run.ID)).stdout; !strings.Contains(text, "Progress of prep: 90%, loss=0.5") {
		t.Errorf("describe does not show the plain task's report:\n%s", text)
	}
}
