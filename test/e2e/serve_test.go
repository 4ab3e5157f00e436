package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// startServe starts kiln serve on a free port and returns its URL, its
// admin token and the process.
func startServe(t *testing.T, home string) (string, string, *exec.Cmd) {
	t.Helper()
	return startServeAs(t, home, nil, nil)
}

// startServeAs is startServe with more environment and arguments, as the
// user cred names (nil: this process's).
func startServeAs(t *testing.T, home string, cred *syscall.Credential, env []string, args ...string) (string, string, *exec.Cmd) {
	t.Helper()
	return startServeIn(t, nil, home, cred, env, args...)
}

// startServeIn is startServeAs run through the command wrap (such as
// ip netns exec NS), if any.
func startServeIn(t *testing.T, wrap []string, home string, cred *syscall.Credential, env []string, args ...string) (string, string, *exec.Cmd) {
	t.Helper()
	// Tasks running as project accounts reach their attempt through
	// KILN_HOME's parents, which the test's temporary directories keep to
	// their owner.
	for dir := filepath.Dir(home); dir != os.TempDir(); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	argv := append(append(slices.Clone(wrap), kilnBin, "--home", home, "serve", "--addr", "127.0.0.1:0"), args...)
	serve := exec.Command(argv[0], argv[1:]...)
	serve.Env = append(os.Environ(), env...)
	serve.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr strings.Builder
	serve.Stderr = &stderr
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	var base string
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "kiln serving on "); ok {
			base = addr
			break
		}
	}
	if base == "" {
		_ = serve.Wait()
		t.Fatalf("kiln serve never said where it listens: %s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	tokenFile := filepath.Join(home, "admin.token")
	fi, err := os.Stat(tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin.token: %v, mode %v; want it with mode 0600", err, fi.Mode())
	}
	raw, _ := os.ReadFile(tokenFile)
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	return base, strings.TrimSpace(string(raw)), serve
}

func TestServeWithTokens(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, serve := startServe(t, home)

	call := func(method, path, token, body string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, b := call("POST", "/api/v1/runs", admin, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: served}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	if code != http.StatusCreated {
		t.Fatalf("submit: %d %s", code, b)
	}
	var run apiv1.Run
	_ = json.Unmarshal(b, &run)
	waitFor(t, "the served run to succeed", func() bool {
		_, b := call("GET", "/api/v1/runs/"+string(run.ID), admin, "")
		var got apiv1.Run
		return json.Unmarshal(b, &got) == nil && got.Status.Phase == apiv1.PhaseSucceeded
	})

	created := kiln(t, home, "token", "create", "reader", "--role", "viewer", "--project", "default")
	viewer := strings.TrimSpace(created.stdout)
	if code, _ := call("GET", "/api/v1/runs", viewer, ""); code != http.StatusOK {
		t.Errorf("viewer list = %d, want 200", code)
	}
	if code, _ := call("POST", "/api/v1/runs/"+string(run.ID)+"/cancel", viewer, ""); code != http.StatusForbidden {
		t.Errorf("viewer cancel = %d, want 403", code)
	}
	list := kiln(t, home, "token", "list")
	if strings.Contains(list.stdout, viewer) || strings.Contains(list.stdout, admin) {
		t.Error("kiln token list shows token values")
	}
	id := strings.Fields(strings.Split(list.stdout, "\n")[2])[0] // header, admin, reader
	kiln(t, home, "token", "revoke", id)
	if code, _ := call("GET", "/api/v1/runs", viewer, ""); code != http.StatusUnauthorized {
		t.Errorf("revoked token = %d, want 401", code)
	}

	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("kiln serve after SIGTERM: %v, want a clean exit", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("kiln serve did not stop on SIGTERM")
	}
}

func TestCLIAgainstServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	dir := t.TempDir()
	good := writeFile(t, dir, "good.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: remote}\n"+
		"spec: {tasks: [{name: hi, command: [sh, -c, 'echo hi from the server']}]}\n")
	bad := writeFile(t, dir, "bad.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: remote-bad}\n"+
		"spec: {tasks: [{name: boom, command: [sh, -c, 'exit 6']}]}\n")
	other := t.TempDir() // the client needs no home of its own

	r := kilnWithEnv(t, client, other, "run", good)
	if r.code != 0 || !strings.Contains(r.stdout, "Succeeded in") {
		t.Fatalf("remote run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = kilnWithEnv(t, client, other, "run", bad)
	if r.code != 1 || !strings.Contains(r.stderr, "task boom failed (KLN-3002): the process exited with code 6") {
		t.Errorf("remote failing run: %d %s", r.code, r.stderr)
	}
	var list []apiv1.Run
	r = kilnWithEnv(t, client, other, "get", "runs", "-o", "json")
	if err := unmarshalList(r.stdout, "RunList", &list); err != nil || len(list) != 2 {
		t.Fatalf("remote get runs: %v %s", err, r.stdout)
	}
	id := string(list[1].ID) // the older: the good run
	if r := kilnWithEnv(t, client, other, "describe", "run", id); !strings.Contains(r.stdout, "Succeeded") || !strings.Contains(r.stdout, "Events:") {
		t.Errorf("remote describe: %s", r.stdout)
	}
	if r := kilnWithEnv(t, client, other, "logs", id, "hi"); r.stdout != "hi from the server\n" {
		t.Errorf("remote logs = %q", r.stdout)
	}
	if r := kilnWithEnv(t, client, other, "logs", "-f", id); r.stdout != "[hi] hi from the server\n" {
		t.Errorf("remote logs -f of every task = %q", r.stdout)
	}
	if r := kilnWithEnv(t, client, other, "describe", "run", "nope"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4001") {
		t.Errorf("remote describe of an unknown run: %d %s", r.code, r.stderr)
	}
	badToken := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN=kln_wrong")
	if r := kilnWithEnv(t, badToken, other, "get", "runs"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4003") {
		t.Errorf("a bad token: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(other, "kiln.db")); err == nil {
		t.Error("the client made a store of its own")
	}
}

func TestServerRestartAdoptsRunningAttempts(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	ledger := filepath.Join(sharedDir(t), "ledger")
	base, admin, serve := startServe(t, home)
	body := `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: long}
spec:
  tasks:
  - {name: slow, command: [sh, -c, 'echo started >> ` + ledger + `; sleep 2']}
  - {name: next, dependsOn: [slow], command: ["true"]}
`
	run := postRun(t, base, admin, body)
	waitFor(t, "the task to start", func() bool { return lines(ledger) == 1 })
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = serve.Wait()

	base, admin, _ = startServe(t, home) // a new server adopts the run
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	waitFor(t, "the run to finish on the new server", func() bool {
		r := kilnWithEnv(t, client, t.TempDir(), "get", "runs", "-o", "json")
		var list []apiv1.Run
		return unmarshalList(r.stdout, "RunList", &list) == nil && len(list) == 1 && list[0].Status.Phase.Done()
	})
	got := describe(t, home, run.ID)
	if got.Status.Phase != apiv1.PhaseSucceeded || len(got.Status.Nodes[0].Attempts) != 1 || lines(ledger) != 1 {
		t.Errorf("run %s, slow has %d attempts, ledger %d lines; want Succeeded with the first attempt adopted",
			got.Status.Phase, len(got.Status.Nodes[0].Attempts), lines(ledger))
	}
}

// postRun submits a document to a server and returns the new run.
func postRun(t *testing.T, base, token, body string) apiv1.Run {
	t.Helper()
	return postRunAs(t, base, token, "", body)
}

// sharedDir is a fresh directory that tasks of any account may write to,
// as served tasks run as project accounts of their own.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p := dir; p != os.TempDir(); p = filepath.Dir(p) {
		mode := os.FileMode(0o711)
		if p == dir {
			mode = 0o777
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
