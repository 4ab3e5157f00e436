package e2e

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestMetricsCountOutcomes runs a workflow that fails and a training job
// that restarts once and succeeds on a served kiln, then reads /metrics:
// runs and tasks by outcome, the queue-wait and duration histograms, the
// training job counters by framework and the process collector are
// there with the right counts, and promtool's linter passes the page.
func TestMetricsCountOutcomes(t *testing.T) {
	t.Parallel()
	promtool := findPromtool(t)
	home := newHome(t)
	writeFile(t, home, "config.yaml", "serve:\n  metricsPublic: true\n")
	s := startServed(t, home)

	wf := postRun(t, s.base, s.token, `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: mixed}
spec:
  tasks:
  - {name: ok, command: ['true']}
  - {name: bad, command: [sh, -c, 'exit 3'], dependsOn: [ok]}
  - {name: after, command: ['true'], dependsOn: [bad]}
`)
	tj := postRun(t, s.base, s.token, `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: flaky}
spec:
  runtimeRef: {name: plain}
  runPolicy: {backoffLimit: 2}
  trainer:
    numNodes: 1
    command: [sh, -c, 'test "$KILN_ATTEMPT" -ge 2']
`)
	for id, want := range map[apiv1.RunID]apiv1.Phase{wf.ID: apiv1.PhaseFailed, tj.ID: apiv1.PhaseSucceeded} {
		waitFor(t, "run "+string(id)+" to end", func() bool { return describe(t, home, id).Status.Phase.Done() })
		if got := describe(t, home, id).Status.Phase; got != want {
			t.Fatalf("run %s ended %s, want %s", id, got, want)
		}
	}

	page := scrape(t, s.base)
	for _, want := range []string{
		`kiln_runs_finished_total{phase="Failed"} 1`,
		`kiln_runs_finished_total{phase="Succeeded"} 1`,
		`kiln_tasks_finished_total{phase="Failed"} 1`,
		`kiln_tasks_finished_total{phase="Skipped"} 1`,
		`kiln_tasks_finished_total{phase="Succeeded"} 2`,
		`kiln_run_queue_wait_seconds_count 2`,
		`kiln_run_duration_seconds_count{phase="Failed"} 1`,
		`kiln_run_duration_seconds_count{phase="Succeeded"} 1`,
		`kiln_training_jobs_created_total{framework="plain"} 1`,
		`kiln_training_jobs_restarted_total{framework="plain"} 1`,
		`kiln_training_jobs_successful_total{framework="plain"} 1`,
		`kiln_training_jobs_ended_total{framework="plain",phase="Succeeded"} 1`,
		"\nprocess_resident_memory_bytes ",
		"\ngo_goroutines ",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(page, "kiln_training_jobs_failed_total{") {
		t.Errorf("/metrics counts a failed training job, though the job succeeded on its second attempt")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", page)
	}

	lint := exec.Command(promtool, "check", "metrics")
	lint.Stdin = strings.NewReader(page)
	if out, err := lint.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// scrape reads the metrics page of the server at base.
func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d, %v", resp.StatusCode, err)
	}
	return string(b)
}

// findPromtool is Prometheus's promtool: on PATH, or where make deps puts
// it (hack/promtool.sh). Without it the test skips, unless
// KILN_REQUIRE_PROMTOOL=1 (CI) says it must run.
func findPromtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	p, _ := filepath.Abs("../../.tools/bin/promtool")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if os.Getenv("KILN_REQUIRE_PROMTOOL") == "1" {
		t.Fatal("promtool is missing: run hack/promtool.sh (make deps does)")
	}
	t.Skip("promtool is missing: run hack/promtool.sh to get it")
	return ""
}
