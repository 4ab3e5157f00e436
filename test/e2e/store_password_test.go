package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/store/pgtest"
)

// TestStorePasswordIsRefusedOnTheCommandLine: a password in --store,
// where every process on the machine reads it, is refused with KLN-5054,
// and the message does not repeat it.
func TestStorePasswordIsRefusedOnTheCommandLine(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-on-the-command-line"
	for _, args := range [][]string{
		{"serve", "--addr", "127.0.0.1:0", "--store", "postgres://kiln:" + secret + "@127.0.0.1:1/kiln"},
		{"get", "runs", "--store", "host=127.0.0.1 user=kiln password=" + secret + " dbname=kiln"},
	} {
		r := kiln(t, newHome(t), args...)
		if r.code == 0 || !strings.Contains(r.stderr, "KLN-5054") || !strings.Contains(r.stderr, "--store") {
			t.Errorf("kiln %s: exit %d, want KLN-5054 naming --store:\n%s", args[0], r.code, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("kiln %s repeats the password:\n%s%s", args[0], r.stdout, r.stderr)
		}
	}
}

// TestTasksCannotReadTheStorePassword serves a PostgreSQL store whose
// password comes in KILN_STORE, under every isolation, and runs a task
// that reads its own environment and every process's command line and
// environment it can: the password is in none of them.
func TestTasksCannotReadTheStorePassword(t *testing.T) {
	t.Parallel()
	pg := pgtest.Start(t)
	for _, mode := range append([]string{local.IsolateNone}, isolationModes()...) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dsn := pg.NewDatabase(t)
			if !strings.Contains(dsn, pg.Password()) {
				t.Fatalf("the test server's address holds no password: %s", dsn)
			}
			keyDir := t.TempDir()
			if err := os.Chmod(keyDir, 0o777); err != nil { // the server may run as nobody
				t.Fatal(err)
			}
			home, base, admin, _ := startIsolated(t, mode, "KILN_STORE="+dsn, "PGPASSWORD="+pg.Password(),
				"KILN_SECRET_KEY_FILE="+filepath.Join(keyDir, "secret.key"))
			run := postRunAs(t, base, admin, "", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: snoop}
spec:
  tasks:
  - name: t
    command: [sh, -c, 'for p in /proc/[0-9]*; do echo "== $p"; cat $p/cmdline $p/environ; echo; done > "$KILN_OUTPUTS/dump" 2>/dev/null; env >> "$KILN_OUTPUTS/dump"']
`)
			waitServed(t, base, admin, run.ID, apiv1.PhaseSucceeded)
			dump, err := os.ReadFile(filepath.Join(home, "runs", string(run.ID), "t", "1", "outputs", "dump"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(dump), "--isolation") {
				t.Fatalf("the task read no command line of the server (%d bytes): it proves nothing", len(dump))
			}
			for _, secret := range []string{pg.Password(), "KILN_STORE=", "PGPASSWORD="} {
				if i := strings.Index(string(dump), secret); i >= 0 {
					t.Errorf("a task read %q: ...%s...", secret, around(dump, i))
				}
			}
		})
	}
}

// around is the text of b around i, for a message.
func around(b []byte, i int) string {
	lo, hi := max(0, i-200), min(len(b), i+200)
	return fmt.Sprintf("%q", b[lo:hi])
}

// TestStoreSecretsLeaveTheEnvironmentOnSQLite: whatever the store,
// PGPASSWORD and KILN_STORE are gone from the environment of the
// supervisor kiln serve starts, and --task-env refuses to hand a task
// the store's password, a name of kiln's, or what is not a name.
func TestStoreSecretsLeaveTheEnvironmentOnSQLite(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("reading a non-dumpable supervisor's /proc environment needs root")
	}
	home := newHome(t)
	base, admin, _ := startServeAs(t, home, nil, []string{"PGPASSWORD=pw-never-inherited", "KILN_STORE=sqlite"}, "--isolation", "none")
	run := postRunAs(t, base, admin, "", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec: {tasks: [{name: a, command: [env]}]}\n")
	waitServed(t, base, admin, run.ID, apiv1.PhaseSucceeded)
	pid := local.SupervisorPID(home)
	if pid == 0 {
		t.Fatal("no supervisor serves the home after a run")
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(environ), "pw-never-inherited") || strings.Contains(string(environ), "KILN_STORE=") {
		t.Errorf("the supervisor inherited the store's variables: %s", around(environ, max(0, strings.Index(string(environ), "PGPASSWORD"))))
	}
	for name, says := range map[string]string{"PGPASSWORD": "never reaches a task", "KILN_X": "kiln's", "BAD NAME": "not a variable name"} {
		r := kiln(t, newHome(t), "serve", "--addr", "127.0.0.1:0", "--isolation", "none", "--task-env", name)
		if r.code == 0 || !strings.Contains(r.stderr, "KLN-4002") || !strings.Contains(r.stderr, says) {
			t.Errorf("kiln serve --task-env %q: exit %d %s, want KLN-4002 saying %q", name, r.code, r.stderr, says)
		}
	}
}
