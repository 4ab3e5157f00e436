package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// logRecords parses kiln serve's JSON log, each line one record.
func logRecords(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.Lines(stderr) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		recs = append(recs, rec)
	}
	return recs
}

// withMsg returns the records whose msg is msg.
func withMsg(recs []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// TestServeLogsAtInfoWithoutVerbose runs kiln serve without -v: its log
// says that it serves (where, on which store, which version) and that a
// run failed (its ID, code and message), and holds no request lines (-v
// adds them, their duration in seconds) and never the token.
func TestServeLogsAtInfoWithoutVerbose(t *testing.T) {
	t.Parallel()
	s := startServed(t, newHome(t), "--log-format", "json")
	run := postRun(t, s.base, s.token, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: doomed}\n"+
		"spec: {tasks: [{name: t, command: [sh, -c, 'exit 3']}]}\n")
	var recs []map[string]any
	waitFor(t, "the failed run in the log", func() bool {
		_, stderr := s.out()
		return strings.Contains(stderr, string(run.ID)) && strings.Contains(stderr, `"run ended"`)
	})
	_, stderr := s.out()
	recs = logRecords(t, stderr)
	serving := withMsg(recs, "serving")
	if len(serving) != 1 || serving[0]["level"] != "INFO" || !strings.HasPrefix(str(serving[0]["address"]), "http://127.0.0.1:") ||
		serving[0]["store"] != "sqlite" || str(serving[0]["version"]) == "" {
		t.Errorf("no INFO serving line with the address, store and version: %v", serving)
	}
	ended := withMsg(recs, "run ended")
	if len(ended) != 1 || ended[0]["level"] != "INFO" || ended[0]["run"] != string(run.ID) || ended[0]["phase"] != "Failed" ||
		!strings.HasPrefix(str(ended[0]["code"]), "KLN-") || str(ended[0]["message"]) == "" {
		t.Errorf("the failed run's line = %v, want INFO with its ID, phase, code and message", ended)
	}
	if got := withMsg(recs, "request"); len(got) != 0 {
		t.Errorf("without -v the log has request lines: %v", got)
	}
	if strings.Contains(stderr, s.token) {
		t.Errorf("the token is in the log:\n%s", stderr)
	}
	t.Logf("kiln serve's log:\n%s", stderr)

	v := startServed(t, newHome(t), "-v", "--log-format", "json")
	req, _ := http.NewRequest("GET", v.base+"/api/v1/runs?token="+v.token, nil)
	req.Header.Set("Authorization", "Bearer "+v.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitFor(t, "a request line", func() bool { _, stderr := v.out(); return strings.Contains(stderr, `"msg":"request"`) })
	_, stderr = v.out()
	for _, r := range withMsg(logRecords(t, stderr), "request") {
		d, isNumber := r["duration_s"].(float64)
		if r["level"] != "DEBUG" || !isNumber || d <= 0 || d > 60 || r["duration"] != nil || r["route"] != "/api/v1/runs" {
			t.Errorf("request line %v: want DEBUG, its route, and duration_s in seconds", r)
		}
	}
	if strings.Contains(stderr, v.token) {
		t.Errorf("the token is in the -v log:\n%s", stderr)
	}
}
