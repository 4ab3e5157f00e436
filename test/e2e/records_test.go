package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Ctrl-C starts a cancel; a second Ctrl-C leaves before the task has
// stopped. kiln resume finishes the cancel, and the record says Cancelled
// for the run, the task and its attempt.
func TestSecondCtrlCThenResumeEndsCancelled(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	started, stopping := filepath.Join(dir, "started"), filepath.Join(dir, "stopping")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: slow-stop}
spec:
  tasks:
  - name: stubborn
    retries: {limit: 2}
    command: [sh, -c, 'trap "touch `+stopping+`; sleep 1; exit 143" TERM; touch `+started+`; sleep 300 & wait']
`)
	cmd := startKiln(t, home, "run", wf)
	waitFor(t, "the task to start", func() bool { return exists(started) })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the task to be asked to stop", func() bool { return exists(stopping) })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("kiln run after two Ctrl-C: %v, want exit code 130", err)
	}
	if r := kiln(t, home, "resume"); r.code != 1 || !strings.Contains(r.stderr, "Cancelled") {
		t.Fatalf("kiln resume: %d %s%s", r.code, r.stdout, r.stderr)
	}
	run := runs(t, home)[0]
	run = describe(t, home, run.ID)
	n := run.Status.Nodes[0]
	if run.Status.Phase != apiv1.PhaseCancelled || n.Phase != apiv1.PhaseCancelled || len(n.Attempts) != 1 || n.Attempts[0].Phase != apiv1.PhaseCancelled {
		t.Errorf("run %s, task %s, attempts %+v; want all Cancelled, one attempt", run.Status.Phase, n.Phase, n.Attempts)
	}
}

// Cancel, suspend and retry say so, and exit non-zero, when the run's
// phase does not allow them.
func TestRequestsARunsPhaseRefusesAreCoded(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	wf := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: quick}\nspec: {tasks: [{name: a, command: [\"true\"]}]}\n")
	if r := kiln(t, home, "run", wf); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	id := string(runs(t, home)[0].ID)
	for _, args := range [][]string{{"cancel", id}, {"suspend", id}, {"unsuspend", id}, {"retry", id}} {
		r := kiln(t, home, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "KLN-4010") || !strings.Contains(r.stderr, "Succeeded") {
			t.Errorf("kiln %s of a Succeeded run: exit %d, %q; want 1 and KLN-4010 naming the phase", args[0], r.code, r.stderr)
		}
	}
	for _, args := range [][]string{{"cancel", "no-such-run"}, {"resume", "no-such-run"}, {"describe", "runs", "no-such-run"}} {
		if r := kiln(t, home, args...); r.code != 1 || !strings.Contains(r.stderr, "KLN-4001") {
			t.Errorf("kiln %s of an unknown run: exit %d, %q; want 1 and KLN-4001", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if r := kiln(t, home, "resume", id); r.code != 1 || !strings.Contains(r.stderr, "KLN-4010") || !strings.Contains(r.stderr, "kiln retry "+id) {
		t.Errorf("kiln resume of a Succeeded run: exit %d, %q; want 1 and KLN-4010 pointing at kiln retry", r.code, r.stderr)
	}
}

// A wrong subcommand, phase or place is a usage error that says what
// would be right, never a help page that exits 0.
func TestWrongCommandLinesAreUsageErrors(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, tc := range []struct {
		args []string
		env  []string
		says string
	}{
		{args: []string{"get", "foo"}, says: "it has: quotas, runs, runtimes, schedules, templates"},
		{args: []string{"describe", "rnu", "x"}, says: "it has: run"},
		{args: []string{"token", "create", "ci"}, env: []string{"KILN_SERVER=http://127.0.0.1:9"}, says: "not through a server"},
	} {
		r := kilnWithEnv(t, tc.env, home, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, "KLN-4002") || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("kiln %s: exit %d, %q; want 2 and KLN-4002 saying %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.says)
		}
	}
	if r := kiln(t, home, "get", "runs", "--phase", "failed"); r.code != 0 {
		t.Errorf("kiln get runs --phase failed (any case): exit %d, %q", r.code, r.stderr)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
