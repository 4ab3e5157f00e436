package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ledgerWorkflow is three layers of four tasks; every task appends its
// name to the ledger when it starts, then works for a while.
func ledgerWorkflow(name, ledger string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: %s}\nspec:\n  tasks:\n", name)
	for layer := range 3 {
		for i := range 4 {
			deps := ""
			if layer > 0 {
				deps = fmt.Sprintf(", dependsOn: [l%d-t%d, l%d-t%d]", layer-1, i, layer-1, (i+1)%4)
			}
			fmt.Fprintf(&b, "  - {name: l%d-t%d%s, command: [sh, -c, 'echo $0 >> %s; sleep 0.$1', '{{task.name}}', '%d']}\n",
				layer, i, deps, ledger, 2+i*2)
		}
	}
	return b.String()
}

func TestKillNineThenResumeRunsEveryTaskOnce(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	wf := writeFile(t, dir, "wf.yaml", ledgerWorkflow("ledger", ledger))

	// Kill the engine twice at different points, then let a resume finish.
	first := startKiln(t, home, "run", "--cpus", "2", wf)
	waitFor(t, "three tasks to start", func() bool { return lines(ledger) >= 3 })
	killNine(t, first)
	if n := running(t, home); n == 0 {
		t.Fatal("no task was running when the engine was killed; the test proves nothing")
	}

	second := startKiln(t, home, "resume", "--cpus", "3")
	waitFor(t, "seven tasks to start", func() bool { return lines(ledger) >= 7 })
	killNine(t, second)

	r := kiln(t, home, "resume", "--cpus", "2")
	if r.code != 0 {
		t.Fatalf("final resume exited %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(ledger)
	count := map[string]int{}
	for _, name := range strings.Fields(string(b)) {
		count[name]++
	}
	for layer := range 3 {
		for i := range 4 {
			if name := fmt.Sprintf("l%d-t%d", layer, i); count[name] != 1 {
				t.Errorf("task %s appended %d times, want exactly once", name, count[name])
			}
		}
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run is %s: %s", run.Status.Phase, run.Status.Message)
	}
	for _, n := range run.Status.Nodes {
		if len(n.Attempts) != 1 || n.Attempts[0].ExitCode == nil || *n.Attempts[0].ExitCode != 0 {
			t.Errorf("task %s: attempts %+v, want one that exited 0", n.Name, n.Attempts)
		}
	}
}

func TestTwoEnginesShareOneHome(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	results := make([]result, 2)
	for k := range 2 {
		ledger := filepath.Join(dir, fmt.Sprintf("ledger%d", k))
		wf := writeFile(t, dir, fmt.Sprintf("wf%d.yaml", k), ledgerWorkflow(fmt.Sprintf("engine%d", k), ledger))
		wg.Go(func() { results[k] = kiln(t, home, "run", wf) })
	}
	// While both engines are alive, resume must take nothing.
	waitFor(t, "both runs to exist", func() bool { return len(runs(t, home)) == 2 })
	if r := kiln(t, home, "resume"); r.code != 0 || !strings.Contains(r.stdout, "no unfinished runs") {
		t.Errorf("resume beside two live engines: exit %d, stdout %q; want it to take nothing", r.code, r.stdout)
	}
	wg.Wait()
	for k, r := range results {
		if r.code != 0 {
			t.Errorf("engine %d exited %d: %s", k, r.code, r.stderr)
		}
	}
	for k := range 2 {
		if n := lines(filepath.Join(dir, fmt.Sprintf("ledger%d", k))); n != 12 {
			t.Errorf("ledger %d has %d lines, want 12", k, n)
		}
	}
}

// running counts the tasks the store records as running.
func running(t *testing.T, home string) int {
	t.Helper()
	n := 0
	for _, node := range describe(t, home, runs(t, home)[0].ID).Status.Nodes {
		if node.Phase == apiv1.PhaseRunning {
			n++
		}
	}
	return n
}

func killNine(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

func lines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

func fileHasLine(path string) bool { return lines(path) > 0 }

func readPID(t *testing.T, path string) int {
	t.Helper()
	b, _ := os.ReadFile(path)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("reading pid from %s: %v", path, err)
	}
	return pid
}

func TestKillNineDuringAGangThenResumeAdoptsIt(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	job := writeFile(t, dir, "job.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: gang}
spec:
  runtimeRef: {name: plain}
  trainer:
    numNodes: 3
    command: [sh, -c, 'echo $KILN_ATTEMPT >> `+ledger+`; sleep 1']
    resourcesPerNode: {cpu: 100m}
`)
	first := startKiln(t, home, "run", job)
	waitFor(t, "the gang to start", func() bool { return lines(ledger) == 3 })
	killNine(t, first)
	if r := kiln(t, home, "resume"); r.code != 0 {
		t.Fatalf("resume exited %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(ledger); string(b) != "1\n1\n1\n" {
		t.Errorf("ledger = %q, want the first attempt's three processes only: the gang was started again", b)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if n := run.Status.Nodes[0]; n.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 1 || n.Replicas[0].Succeeded != 3 {
		t.Errorf("trainer = %s, %d attempts, replicas %+v; want Succeeded once with 3 processes", n.Phase, len(n.Attempts), n.Replicas)
	}
}
