package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// apiGet GETs path from a server with token and returns the status and body.
func apiGet(t *testing.T, base, token, path string) (int, string) {
	t.Helper()
	return apiCall(t, "GET", base, token, path, "")
}

// apiPost posts body to path on a server and returns the answer.
func apiPost(t *testing.T, base, token, path, body string) (int, string) {
	t.Helper()
	return apiCall(t, "POST", base, token, path, body)
}

// apiCall sends a request with token to a server and returns the answer.
func apiCall(t *testing.T, method, base, token, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestGangLogsAreLabelledAlike runs a two-node training job of shell
// commands that fails once and then succeeds, on a server: the logs of
// each attempt name each line's process (node and local rank, "node-1-0") the same way
// through the embedded engine, kiln logs --server and the logs API, and
// the API puts each line's time before its label when asked.
func TestGangLogsAreLabelledAlike(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	marker := sharedDir(t) + "/tried"
	job := `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: gang}
spec:
  runtimeRef: {name: torch-distributed}
  runPolicy: {backoffLimit: 1}
  trainer:
    numNodes: 2
    resourcesPerNode: {cpu: 100m}
    command: [sh, -c, 'echo "rank $RANK"; echo "to stderr" >&2; if [ "$RANK" = 0 ] && [ ! -e ` + marker + ` ]; then touch ` + marker + `; exit 3; fi; sleep 1; echo done']
`
	run := postRun(t, base, admin, job)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	waitFor(t, "the job to end", func() bool {
		_, body := apiGet(t, base, admin, "/api/v1/runs/"+string(run.ID))
		var r apiv1.Run
		return json.Unmarshal([]byte(body), &r) == nil && r.Status.Phase.Done()
	})
	got := describe(t, home, run.ID)
	if got.Status.Phase != apiv1.PhaseSucceeded || len(got.Status.Nodes[0].Attempts) != 2 {
		t.Fatalf("run %s with %d attempts, want Succeeded on the second", got.Status.Phase, len(got.Status.Nodes[0].Attempts))
	}

	for _, attempt := range []string{"1", "2"} {
		embedded := kiln(t, home, "logs", "--attempt", attempt, string(run.ID), "trainer")
		remote := kilnWithEnv(t, client, t.TempDir(), "logs", "--attempt", attempt, string(run.ID), "trainer")
		code, api := apiGet(t, base, admin, "/api/v1/runs/"+string(run.ID)+"/tasks/trainer/logs?attempt="+attempt)
		if code != http.StatusOK || embedded.code != 0 || remote.code != 0 {
			t.Fatalf("attempt %s: API %d, embedded %d %s, remote %d %s", attempt, code, embedded.code, embedded.stderr, remote.code, remote.stderr)
		}
		if embedded.stdout != api || remote.stdout != api {
			t.Errorf("attempt %s: the logs differ:\nembedded:\n%s\n--server:\n%s\nAPI:\n%s", attempt, embedded.stdout, remote.stdout, api)
		}
		for _, want := range []string{"node-0-0 | rank 0\n", "node-1-0 | rank 1\n", "node-0-0 | to stderr\n", "node-1-0 | to stderr\n"} {
			if attempt == "1" && strings.HasPrefix(want, "node-1-0") {
				continue // its gang was stopped when node-0 failed, maybe before it wrote
			}
			if !strings.Contains(api, want) {
				t.Errorf("attempt %s: logs lack %q:\n%s", attempt, want, api)
			}
		}
		if done := strings.Contains(api, "node-0-0 | done"); done != (attempt == "2") {
			t.Errorf("attempt %s: logs hold done = %t:\n%s", attempt, done, api)
		}
	}

	code, timed := apiGet(t, base, admin, "/api/v1/runs/"+string(run.ID)+"/tasks/trainer/logs?timestamps=true&tail=1")
	if code != http.StatusOK {
		t.Fatalf("timed logs: %d %s", code, timed)
	}
	lines := strings.Split(strings.TrimSuffix(timed, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("timed logs, tail 1, are %d lines, want the last line of each process (stdout and stderr together):\n%s", len(lines), timed)
	}
	var last time.Time
	seen := map[string]bool{}
	for _, line := range lines {
		ts, rest, _ := strings.Cut(line, " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || at.Before(last) || time.Since(at) > time.Minute {
			t.Errorf("timed line %q: want a time of the last minute, no earlier than the line before's (%v)", line, err)
		}
		last, seen[rest] = at, true
	}
	if !seen["node-0-0 | done"] || !seen["node-1-0 | done"] {
		t.Errorf("timed logs, tail 1 = %q, want each process's done", timed)
	}
	code, body := apiGet(t, base, admin, "/api/v1/runs/"+string(run.ID)+"/tasks/trainer/logs?since=yesterday")
	if code != http.StatusBadRequest || !strings.Contains(body, "since") {
		t.Errorf("a bad since: %d %s, want 400 naming it", code, body)
	}
}
