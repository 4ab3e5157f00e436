package e2e

import (
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func TestExamplePipelineRunsGreen(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := kiln(t, home, "run", filepath.Join(repoRoot(), "examples", "pipeline.yaml"), "-p", "epochs=150")
	if r.code != 0 {
		t.Fatalf("kiln run exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Succeeded in") {
		t.Errorf("no summary in output:\n%s", r.stdout)
	}
	list := runs(t, home)
	if len(list) != 1 {
		t.Fatalf("%d runs, want 1", len(list))
	}
	run := describe(t, home, list[0].ID)
	if run.Params["epochs"] != "150" {
		t.Errorf("params = %v, want epochs=150 from -p", run.Params)
	}
	for _, n := range run.Status.Nodes {
		if n.Phase != apiv1.PhaseSucceeded {
			t.Errorf("task %s is %s", n.Name, n.Phase)
		}
	}
	best := run.Status.Nodes[3].Outputs["best"]
	if !strings.HasPrefix(best, "lr=0.1 ") {
		t.Errorf("evaluate chose %q, want the lr=0.1 model", best)
	}
	logs := kiln(t, home, "logs", string(run.ID), "train-fast")
	if !strings.Contains(logs.stdout, "final loss") {
		t.Errorf("logs of train-fast lack its last line:\n%s", logs.stdout)
	}
}

func TestInvalidSpecIsRejectedWithEveryError(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	bad := writeFile(t, t.TempDir(), "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: bad}
spec:
  tasks:
  - {name: a, command: [x], dependsOn: [c]}
  - {name: b, command: [], timeout: 5 minutes}
  - {name: c, command: [x], dependsOn: [a]}
  - {name: Bad_Name, command: [x], args: ['{{params.nope}}']}
`)
	for _, verb := range []string{"validate", "run"} {
		r := kiln(t, home, verb, bad)
		if r.code != 1 {
			t.Errorf("kiln %s exited %d, want 1", verb, r.code)
		}
		for _, want := range []string{
			"KLN-1008", "a -> c -> a", "KLN-1004", "spec.tasks[1].command", "KLN-1009",
			"KLN-1005", "spec.tasks[3].name", "KLN-1011", "bad.yaml", "Workflow/bad",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("kiln %s output lacks %q:\n%s", verb, want, r.stderr)
			}
		}
	}
	if got := runs(t, home); len(got) != 0 {
		t.Errorf("an invalid spec created %d runs", len(got))
	}
}

func TestFailingTaskNamesItselfAndExitsNonZero(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	wf := writeFile(t, t.TempDir(), "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: broken}
spec:
  failFast: false
  params: [{name: code, default: "4"}]
  tasks:
  - {name: ok, command: ["true"]}
  - {name: boom, dependsOn: [ok], command: [sh, -c, 'echo failing >&2; exit $0', '{{params.code}}']}
  - {name: ghost, command: [kiln-no-such-program]}
`)
	r := kiln(t, home, "run", wf, "-p", "code=9")
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"task boom failed (KLN-3002): the process exited with code 9", "task ghost failed (KLN-3001)", "kiln-no-such-program"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if r := kiln(t, home, "run", wf, "-p", "cde=1"); r.code != 1 || !strings.Contains(r.stderr, "KLN-1014") {
		t.Errorf("unknown -p: exit %d, stderr %s; want KLN-1014", r.code, r.stderr)
	}
}

// Ctrl-C on kiln run cancels the run, waits for it to end Cancelled and
// exits 130, as docs/cli.md says, embedded and through a server.
func TestCtrlCCancelsTheRun(t *testing.T) {
	t.Parallel()
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			started := filepath.Join(dir, "started")
			wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: long}
spec:
  tasks:
  - {name: sleeper, command: [sh, -c, 'echo $$ > `+started+`; exec sleep 300']}
`)
			cmd := exec.Command(kilnBin, "--home", m.home, "run", wf)
			cmd.Env = m.env
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the task to start", func() bool { return fileHasLine(started) })
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("kiln run after Ctrl-C: %v, want exit code 130\n%s", err, stderr.String())
			}
			r := m.kiln(t, "get", "runs", "--search", "long", "-o", "jsonpath={.items[0].status.phase}")
			if got := strings.TrimSpace(r.stdout); got != string(apiv1.PhaseCancelled) {
				t.Errorf("run is %q (%s), want Cancelled", got, r.stderr)
			}
			pid := readPID(t, started)
			waitFor(t, "the task's process to end", func() bool { return syscall.Kill(pid, 0) != nil })
		})
	}
}

func TestBrokenHomeIsACodedError(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeFile(t, home, "kiln.db", strings.Repeat("not a database ", 100))
	if r := kiln(t, home, "get", "runs"); r.code != 1 || !strings.Contains(r.stderr, "KLN-5002") || strings.Contains(r.stderr, "panic") {
		t.Errorf("corrupt store: exit %d, stderr %q; want KLN-5002", r.code, r.stderr)
	}
	if r := kiln(t, "/proc/kiln-home", "get", "runs"); r.code != 1 || !strings.Contains(r.stderr, "KLN-5001") {
		t.Errorf("unwritable home: exit %d, stderr %q; want KLN-5001", r.code, r.stderr)
	}
}

func TestLogsFollowUntilTheRunEnds(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: talker}
spec:
  tasks:
  - {name: talk, command: [sh, -c, 'echo first; while [ ! -e `+gate+` ]; do sleep 0.01; done; echo second >&2; echo third']}
`)
	run := startKiln(t, home, "run", wf)
	waitFor(t, "the run to start", func() bool {
		list := runs(t, home)
		return len(list) == 1 && list[0].Status.Phase == apiv1.PhaseRunning
	})
	follow := exec.Command(kilnBin, "--home", home, "logs", "-f", string(runs(t, home)[0].ID), "talk")
	var out strings.Builder
	follow.Stdout = &out
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "gate", "")
	if err := run.Wait(); err != nil {
		t.Fatalf("kiln run: %v", err)
	}
	if err := follow.Wait(); err != nil {
		t.Fatalf("kiln logs -f: %v", err)
	}
	for _, want := range []string{"first\n", "second\n", "third\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("followed logs %q lack %q", out.String(), want)
		}
	}
}

func TestRetryFromTheCLI(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: flaky}
spec:
  tasks:
  - {name: first, command: ["true"]}
  - {name: second, dependsOn: [first], command: [test, -e, `+gate+`]}
`)
	if r := kiln(t, home, "run", wf); r.code != 1 {
		t.Fatalf("first run exited %d, want 1", r.code)
	}
	id := string(runs(t, home)[0].ID)
	writeFile(t, dir, "gate", "")
	if r := kiln(t, home, "retry", id); r.code != 0 || !strings.Contains(r.stdout, "Succeeded") {
		t.Fatalf("kiln retry: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "retry", id); r.code != 1 || !strings.Contains(r.stderr, "KLN-4010") || !strings.Contains(r.stderr, "only a Failed or Cancelled run") {
		t.Errorf("retrying a succeeded run: %d %s", r.code, r.stderr)
	}
}
