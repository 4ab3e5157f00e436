package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
)

// TestRootServesWithTheDefaultHome starts kiln serve as the README does,
// as root, with no KILN_HOME and a home directory closed to others (as
// /root is): it must start, isolated (users), in a home its task accounts
// can reach, say which, and run a project's task as the project's account.
// /var/lib is a tmpfs of the server's own mount namespace, so the test
// leaves nothing on the machine.
func TestRootServesWithTheDefaultHome(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the default home of a kiln running as root: the test runs as another user")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is missing: it gives the server a /var/lib of its own")
	}
	rootHome := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(rootHome, 0o700); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount -t tmpfs -o mode=755 kiln-test /var/lib && exec "$0" serve --addr 127.0.0.1:0`, kilnBin)
	serve.Env = append(withoutEnv(os.Environ(), "KILN_HOME", "KILN_SERVER", "KILN_TOKEN"), "HOME="+rootHome)
	var stderr strings.Builder
	serve.Stderr = &stderr
	out, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Kill(); _ = serve.Wait() })
	var said []string
	var base string
	for lines := bufio.NewScanner(out); lines.Scan(); {
		if addr, ok := strings.CutPrefix(lines.Text(), "kiln serving on "); ok {
			base = addr
			break
		}
		said = append(said, lines.Text())
	}
	if base == "" {
		_ = serve.Wait()
		t.Fatalf("kiln serve as root with the default home did not start:\n%s\n%s", strings.Join(said, "\n"), stderr.String())
	}
	text := strings.Join(said, "\n")
	for _, want := range []string{"task isolation: users", "home: /var/lib/kiln (", "created an admin token in /var/lib/kiln/admin.token"} {
		if !strings.Contains(text, want) {
			t.Errorf("kiln serve did not say %q:\n%s", want, text)
		}
	}
	if _, err := os.Stat(filepath.Join(rootHome, ".kiln")); err == nil {
		t.Errorf("kiln made %s/.kiln, which its task accounts cannot reach", rootHome)
	}
	// The server's /var/lib, seen through its own root. Its supervisor,
	// which would outlive it, goes first.
	serverHome := "/proc/" + strconv.Itoa(serve.Process.Pid) + "/root/var/lib/kiln"
	t.Cleanup(func() {
		if pid := local.SupervisorPID(serverHome); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	raw, err := os.ReadFile(serverHome + "/admin.token")
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(raw))
	run := postRunAs(t, base, admin, "ml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: as-account}
spec:
  tasks:
  - {name: t, command: [sh, -c, 'id -u']}
`)
	waitServed(t, base, admin, run.ID, apiv1.PhaseSucceeded)
	code, logs := apiGet(t, base, admin, "/api/v1/runs/"+string(run.ID)+"/tasks/t/logs")
	uid, _ := strconv.Atoi(strings.TrimSpace(logs))
	if code != 200 || uid < 800000 {
		t.Errorf("the task ran as uid %q (%d), want a project account from 800000", logs, code)
	}
}

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}
