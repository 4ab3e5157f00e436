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
	if r := kiln(t, home, "cancel", "no-such-run"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4001") {
		t.Errorf("kiln cancel of an unknown run: exit %d, %q", r.code, r.stderr)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
