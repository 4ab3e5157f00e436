package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
)

// TestTenantCannotSignal runs, under each isolation this machine offers,
// a task of project b that waits to be told to end and a task of project
// a that reads its environment, sends it SIGKILL, and sends signal 0 to
// the server: all three must be refused, and b's task must end Succeeded on its first attempt, not
// be killed and retried as a machine failure at b's cost.
func TestTenantCannotSignal(t *testing.T) {
	t.Parallel()
	eachIsolation(t, func(t *testing.T, mode string) {
		if mode == local.IsolateLandlock && local.LandlockABI() < 6 {
			t.Skipf("the kernel's Landlock ABI %d has no signal scoping (ABI 6, Linux 6.12)", local.LandlockABI())
		}
		tenantSignal(t, mode)
	})
}

func tenantSignal(t *testing.T, mode string) {
	_, base, admin, serve := startIsolated(t, mode)
	shared := t.TempDir()
	for dir := filepath.Dir(shared); dir != os.TempDir(); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil { // project accounts pass through; Landlock lists it to grant what is outside the home
			t.Fatal(err)
		}
	}
	if err := os.Chmod(shared, 0o777); err != nil { // both projects' accounts write here
		t.Fatal(err)
	}
	pidFile, goFile := filepath.Join(shared, "b.pid"), filepath.Join(shared, "go")
	victim := postRunAs(t, base, admin, "b", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: victim}
spec:
  tasks:
  - name: t
    retries: {limit: 3}
    command: [sh, -c, 'echo $$ > %[1]s.tmp && mv %[1]s.tmp %[1]s; i=0; while [ ! -e %[2]s ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done']
`, pidFile, goFile))
	attack := fmt.Sprintf(`i=0; while [ ! -e %[1]s ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
if cat /proc/"$(cat %[1]s)"/environ >/dev/null; then echo "READ b's environment"; else echo "b's environment refused"; fi
if kill -9 "$(cat %[1]s)"; then echo "KILLED b"; else echo "kill of b refused"; fi
if kill -0 %[3]d; then echo "SIGNALLED the server"; else echo "signal to the server refused"; fi
touch %[2]s`, pidFile, goFile, serve.Process.Pid)
	attacker := postRunAs(t, base, admin, "a", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: attacker}
spec:
  tasks:
  - name: t
    command: [sh, -c, %q]
`, attack))
	waitServed(t, base, admin, attacker.ID, apiv1.PhaseSucceeded)
	waitServed(t, base, admin, victim.ID, apiv1.PhaseSucceeded)

	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	logs := kilnWithEnv(t, client, t.TempDir(), "logs", string(attacker.ID), "t")
	for _, want := range []string{"b's environment refused", "kill of b refused", "signal to the server refused"} {
		if !strings.Contains(logs.stdout, want) {
			t.Errorf("project a's task was not refused (want %q):\n%s%s", want, logs.stdout, logs.stderr)
		}
	}
	var got apiv1.Run
	if code := apiGetJSON(t, base, admin, "/api/v1/runs/"+string(victim.ID), &got); code != 200 {
		t.Fatalf("GET run: %d", code)
	}
	for _, n := range got.Status.Nodes {
		if len(n.Attempts) != 1 {
			t.Errorf("project b's task took %d attempts, want 1: %s", len(n.Attempts), n.Message)
		}
	}
}
