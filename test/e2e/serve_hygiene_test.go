package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// served is a kiln serve whose output the test reads.
type served struct {
	base, token    string
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
}

func (s *served) out() (string, string) { return s.stdout.String(), s.stderr.String() }

// startServed starts kiln serve on home with args and keeps what it
// writes. It is killed when the test ends.
func startServed(t *testing.T, home string, args ...string) *served {
	t.Helper()
	for dir := filepath.Dir(home); dir != os.TempDir(); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o711); err != nil { // tasks of project accounts reach the home
			t.Fatal(err)
		}
	}
	s := &served{cmd: exec.Command(kilnBin, append([]string{"--home", home, "serve", "--addr", "127.0.0.1:0"}, args...)...)}
	s.cmd.Stderr = &s.stderr
	pipe, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
	lines := bufio.NewScanner(pipe)
	for lines.Scan() {
		_, _ = s.stdout.Write([]byte(lines.Text() + "\n"))
		if addr, ok := strings.CutPrefix(lines.Text(), "kiln serving on "); ok {
			s.base = addr
			break
		}
	}
	if s.base == "" {
		_, stderr := s.out()
		t.Fatalf("kiln serve never said where it listens: %s", stderr)
	}
	go func() {
		for lines.Scan() {
			_, _ = s.stdout.Write([]byte(lines.Text() + "\n"))
		}
	}()
	raw, _ := os.ReadFile(filepath.Join(home, "admin.token"))
	s.token = strings.TrimSpace(string(raw))
	return s
}

// TestServeSaysItAdoptedRunsOnlyWhenItDid runs a task past the server's
// 10-second round of adoption: the server says nothing of adopting the
// run it works itself. Killed while another run's task runs, the next
// server says it adopted that one.
func TestServeSaysItAdoptedRunsOnlyWhenItDid(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	s := startServed(t, home)
	long := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: long}\nspec: {tasks: [{name: t, command: [sleep, '11']}]}\n"
	run := postRun(t, s.base, s.token, long)
	waitFor(t, "the long run to end", func() bool { return describe(t, home, run.ID).Status.Phase.Done() })
	if stdout, _ := s.out(); strings.Contains(stdout, "adopted") {
		t.Errorf("a server that adopted nothing said it did:\n%s", stdout)
	}

	ledger := filepath.Join(sharedDir(t), "ledger")
	slow := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: slow}\n" +
		"spec: {tasks: [{name: t, command: [sh, -c, 'echo started >> " + ledger + "; sleep 3']}]}\n"
	orphan := postRun(t, s.base, s.token, slow)
	waitFor(t, "the task to start", func() bool { return lines(ledger) == 1 })
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()

	next := startServed(t, home)
	waitFor(t, "the orphaned run to end", func() bool { return describe(t, home, orphan.ID).Status.Phase.Done() })
	if stdout, _ := next.out(); strings.Count(stdout, "adopted 1 run whose engine was gone") != 1 {
		t.Errorf("the server that took over run %s said:\n%s", orphan.ID, stdout)
	}
}

// TestServeLogsJSONAndServesPublicMetrics starts kiln serve with a
// configuration file that asks for JSON logs and public metrics: each
// line it logs is a JSON object with a time, a level and a message, and
// /metrics answers without a token with the build and the requests. A
// bad format is refused, named where it was set.
func TestServeLogsJSONAndServesPublicMetrics(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeFile(t, home, "config.yaml", "serve:\n  logFormat: json\n  metricsPublic: true\n")
	s := startServed(t, home, "-v")
	postRun(t, s.base, s.token, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: hi}\nspec: {tasks: [{name: t, command: ['true']}]}\n")

	resp, err := http.Get(s.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
	resp.Body.Close()
	for _, want := range []string{`kiln_build_info{`, `kiln_http_requests_total{code="201",method="POST",route="/api/v1/runs"} 1`} {
		if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), want) {
			t.Errorf("public metrics: %d, lacking %s", resp.StatusCode, want)
		}
	}

	var stderr string
	waitFor(t, "the engine to log", func() bool { _, stderr = s.out(); return strings.Count(stderr, "\n") >= 2 })
	for line := range strings.Lines(stderr) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		if _, err := time.Parse(time.RFC3339Nano, str(rec["time"])); err != nil || str(rec["level"]) == "" || str(rec["msg"]) == "" {
			t.Errorf("a log line lacks a time, level or msg: %s", line)
		}
	}

	if r := kiln(t, newHome(t), "serve", "--addr", "127.0.0.1:0", "--log-format", "yaml"); r.code == 0 || !strings.Contains(r.stderr, "--log-format") {
		t.Errorf("--log-format yaml: exit %d, %s", r.code, r.stderr)
	}
	bad := newHome(t)
	writeFile(t, bad, "config.yaml", "serve: {logFormat: xml}\n")
	if r := kiln(t, bad, "serve", "--addr", "127.0.0.1:0"); r.code == 0 || !strings.Contains(r.stderr, "serve.logFormat") || !strings.Contains(r.stderr, "config.yaml") {
		t.Errorf("logFormat xml in the file: exit %d, %s", r.code, r.stderr)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
