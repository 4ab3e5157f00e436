package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
)

// TestTenantBreak runs, as an editor of project a, a task that hunts for
// the server's admin token, its environment, the store, the secret key
// and project b's secrets and logs, under each isolation this machine
// offers: it must find nothing, and say what it tried.
func TestTenantBreak(t *testing.T) {
	t.Parallel()
	eachIsolation(t, tenantBreak)
}

// eachIsolation runs test, in parallel, under each isolation this
// machine offers; it skips when there is none.
func eachIsolation(t *testing.T, test func(t *testing.T, mode string)) {
	t.Helper()
	modes := isolationModes()
	if len(modes) == 0 {
		t.Skip("this machine offers no isolation: not root and no Landlock")
	}
	for _, mode := range modes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			test(t, mode)
		})
	}
}

// isolationModes are the isolations this machine offers tasks.
func isolationModes() []string {
	var modes []string
	if os.Geteuid() == 0 {
		modes = append(modes, local.IsolateUsers)
	}
	if local.LandlockABI() > 0 {
		modes = append(modes, local.IsolateLandlock)
	}
	return modes
}

// startIsolated starts kiln serve on a new home with isolation mode and
// the extra environment env, as nobody for any mode but users when the
// test runs as root: those are the isolations of a kiln that does not.
func startIsolated(t *testing.T, mode string, env ...string) (home, base, admin string, serve *exec.Cmd) {
	t.Helper()
	home = newHome(t)
	var asUser *syscall.Credential
	if mode != local.IsolateUsers && os.Geteuid() == 0 {
		asUser = &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
		if err := os.Chown(home, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Dir(kilnBin), 0o711); err != nil {
			t.Fatal(err)
		}
	}
	base, admin, serve = startServeAs(t, home, asUser, env, "--isolation", mode)
	return home, base, admin, serve
}

func tenantBreak(t *testing.T, mode string) {
	const serverSecret = "server-environment-secret-4711"
	const bSecret = "project-b-secret-value-0815"
	home, base, admin, _ := startIsolated(t, mode, "KILN_TEST_SERVER_SECRET="+serverSecret)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)

	set := exec.Command(kilnBin, "secret", "set", "b-key", "--project", "b")
	set.Env, set.Stdin = client, strings.NewReader(bSecret+"\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("kiln secret set: %v %s", err, out)
	}
	bRun := postRunAs(t, base, admin, "b", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: victim}
spec:
  tasks:
  - name: t
    command: [sh, -c, 'echo "$KEY"; echo "$KEY" > "$KILN_OUTPUTS/key"']
    env: [{name: KEY, valueFrom: {secret: b-key}}]
`)
	waitServed(t, base, admin, bRun.ID, apiv1.PhaseSucceeded)

	created := kiln(t, home, "token", "create", "a-editor", "--role", "editor", "--project", "a")
	editor := strings.TrimSpace(created.stdout)
	if editor == "" {
		t.Fatalf("kiln token create: %s", created.stderr)
	}
	bDir := fmt.Sprintf("%s/runs/%s/t/1", home, bRun.ID)
	hunt := strings.Join([]string{
		"echo hunting", "env",
		"cat " + home + "/admin.token", "cat " + home + "/secret.key",
		"strings " + home + "/kiln.db " + home + "/kiln.db-wal | grep -a " + bSecret[:12],
		"ls -R " + home,
		"cat " + bDir + "/stdout " + bDir + "/outputs/key",
		"for p in /proc/[0-9]*; do cat $p/environ 2>/dev/null | tr '\\0' '\\n' | grep -a KILN_TEST_SERVER_SECRET; done",
		`touch "$TMPDIR/scratch" && echo "own tmp is writable"`,
		"echo done hunting",
	}, "; ")
	aRun := postRunAs(t, base, editor, "a", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: hunter}
spec:
  tasks:
  - name: t
    command: [sh, -c, %q]
`, hunt))
	waitServed(t, base, admin, aRun.ID, "")
	logs := kilnWithEnv(t, append(client[:len(client):len(client)], "KILN_TOKEN="+editor), t.TempDir(), "logs", string(aRun.ID), "t")
	if !strings.Contains(logs.stdout, "own tmp is writable") || !strings.Contains(logs.stdout, "done hunting") {
		t.Fatalf("the hunting task did not run to its end:\n%s%s", logs.stdout, logs.stderr)
	}
	for what, secret := range map[string]string{"the admin token": admin, "the server's environment": serverSecret, "project b's secret": bSecret} {
		if strings.Contains(logs.stdout, secret) {
			t.Errorf("a task of project a read %s:\n%s", what, logs.stdout)
		}
	}
	db, err := os.ReadFile(home + "/kiln.db")
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(home + "/kiln.db-wal")
	if bytes.Contains(db, []byte(bSecret)) || bytes.Contains(wal, []byte(bSecret)) {
		t.Error("the store holds project b's secret in plain text")
	}
}

// postRunAs submits a document to project ("": the default) on a server
// and returns the new run.
func postRunAs(t *testing.T, base, token, project, body string) apiv1.Run {
	t.Helper()
	url := base + "/api/v1/runs"
	if project != "" {
		url += "?project=" + project
	}
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run apiv1.Run
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &run); err != nil || run.ID == "" {
		t.Fatalf("submit to %s: %d %s", project, resp.StatusCode, b)
	}
	return run
}

// waitServed waits for a served run to end, in phase unless that is "".
func waitServed(t *testing.T, base, token string, id apiv1.RunID, phase apiv1.Phase) {
	t.Helper()
	var got apiv1.Run
	waitFor(t, "run "+string(id)+" to end", func() bool {
		req, _ := http.NewRequest("GET", base+"/api/v1/runs/"+string(id), nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&got) == nil && got.Status.Phase.Done()
	})
	if phase != "" && got.Status.Phase != phase {
		t.Fatalf("run %s ended %s, want %s: %s", id, got.Status.Phase, phase, got.Status.Message)
	}
}
