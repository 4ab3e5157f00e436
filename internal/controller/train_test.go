package controller

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func hasCond(n apiv1.NodeStatus, typ string) bool {
	for _, c := range n.Conditions {
		if c.Type == typ && c.Status == "True" {
			return true
		}
	}
	return false
}

func TestFailedRankTakesItsGangDown(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 4)
	pids, lock := t.TempDir(), t.TempDir()
	// Each rank records its PID; the one that sees all three recorded and
	// wins the lock (mkdir) exits 3, the others wait to be stopped. A rank
	// never exits 0, whenever it starts.
	id := e.submit(t, `spec:
  tasks:
  - name: gang
    train:
      runtime: plain
      numNodes: 3
      command: [sh, -c, 'echo $$ > `+pids+`/$KILN_ATTEMPT-$$; if [ $(ls `+pids+` | wc -l) -ge 3 ] && mkdir `+lock+`/die 2>/dev/null; then exit 3; fi; exec sleep 300']
      resourcesPerNode: {cpu: 1}
`, nil)
	run := e.wait(t, id)
	gang := nodeOf(run, "gang")
	if gang.Phase != apiv1.PhaseFailed || !strings.Contains(gang.Message, "exited with code 3") || !strings.Contains(gang.Message, "the rest of the gang was stopped") {
		t.Fatalf("gang = %s %q, want Failed naming the process that exited 3", gang.Phase, gang.Message)
	}
	entries, _ := os.ReadDir(pids)
	for _, f := range entries {
		var pid int
		if _, err := fmtSscan(strings.TrimPrefix(f.Name(), "1-"), &pid); err == nil && syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d of the failed gang still runs", pid)
		}
	}
	if r := gang.Replicas; !hasCond(gang, apiv1.ConditionFailed) || len(r) != 1 || r[0].Failed != 1 || r[0].Stopped != 2 {
		t.Errorf("conditions %+v, replicas %+v; want Failed, and in group node 1 failed process and 2 stopped", gang.Conditions, r)
	}
}

func TestGangRestartsWithinBackoffLimit(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 4)
	id := e.submit(t, `spec:
  tasks:
  - name: flaky
    retries: {limit: 2}
    train:
      runtime: plain
      numNodes: 2
      command: [sh, -c, 'test "$KILN_ATTEMPT" -ge 2 || { [ "$0" = x ] && exit 1; sleep 300; }', x]
      resourcesPerNode: {cpu: 1}
`, nil)
	run := e.wait(t, id)
	flaky := nodeOf(run, "flaky")
	if flaky.Phase != apiv1.PhaseSucceeded || len(flaky.Attempts) != 2 {
		t.Fatalf("flaky = %s with %d attempts, want Succeeded on the second", flaky.Phase, len(flaky.Attempts))
	}
	restarted := false
	for _, c := range flaky.Conditions {
		restarted = restarted || c.Type == apiv1.ConditionRestarting
	}
	if !restarted || !hasCond(flaky, apiv1.ConditionComplete) {
		t.Errorf("conditions = %+v, want Restarting seen and Complete", flaky.Conditions)
	}
}

func TestExitCodeNotRetryableInRuntimeFailsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	id := e.submit(t, `spec:
  tasks:
  - name: strict
    retries: {limit: 3}
    train:
      runtime: strict-plain
      resolvedRuntime: {mlPolicy: {plain: {}}, failurePolicy: {retryableExitCodes: [75]}}
      command: [sh, -c, 'exit 3']
`, nil)
	strict := nodeOf(e.wait(t, id), "strict")
	if len(strict.Attempts) != 1 || !strings.Contains(strict.Message, "not retryable") {
		t.Errorf("strict = %d attempts, %q; want one attempt, not retried", len(strict.Attempts), strict.Message)
	}
}

func TestGangsAreAdmittedWholeOrWait(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	log := filepath.Join(t.TempDir(), "log")
	job := func(name string) string {
		return `  - name: ` + name + `
    train:
      runtime: plain
      numNodes: 2
      command: [sh, -c, 'echo start >> ` + log + `; sleep 0.2; echo end >> ` + log + `']
      resourcesPerNode: {cpu: 1}
`
	}
	id := e.submit(t, "spec:\n  tasks:\n"+job("first")+job("second"), nil)
	run := e.wait(t, id)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
	}
	b, _ := os.ReadFile(log)
	if got := strings.Join(strings.Fields(string(b)), " "); got != "start start end end start start end end" {
		t.Errorf("log = %q: two 2-CPU gangs on 2 CPUs must run one after the other, each whole", got)
	}
	queued := hasCondEver(nodeOf(run, "first"), apiv1.ConditionQueued) || hasCondEver(nodeOf(run, "second"), apiv1.ConditionQueued)
	if !queued {
		t.Error("neither gang recorded a Queued condition while it waited")
	}
}

func hasCondEver(n apiv1.NodeStatus, typ string) bool {
	for _, c := range n.Conditions {
		if c.Type == typ {
			return true
		}
	}
	return false
}

func TestGangThatCannotBeAdmittedInTimeFails(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	id := e.submit(t, `spec:
  failFast: false
  tasks:
  - {name: hog, command: [sleep, "2"], resources: {cpu: 2}}
  - name: late
    train:
      runtime: impatient
      resolvedRuntime: {mlPolicy: {plain: {}}, gangPolicy: {scheduleTimeoutSeconds: 1}}
      numNodes: 2
      command: ["true"]
      resourcesPerNode: {cpu: 1}
`, nil)
	late := nodeOf(e.wait(t, id), "late")
	if late.Code != apiv1.CodeScheduleTimeout || !strings.Contains(late.Message, "could not be admitted whole within its admission timeout of 1s") {
		t.Errorf("late = %s %q, want %s", late.Code, late.Message, apiv1.CodeScheduleTimeout)
	}
	if len(late.Attempts) != 0 {
		t.Errorf("a gang that was never admitted has %d attempts", len(late.Attempts))
	}
}

// waitPhase polls the store until node name of run id is in phase.
func (e *engine) waitPhase(t *testing.T, id apiv1.RunID, name string, phase apiv1.Phase) apiv1.NodeStatus {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		run, err := e.store.GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n := nodeOf(run, name); n.Phase == phase {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s never reached %s", name, phase)
		}
		<-time.After(10 * time.Millisecond)
	}
}

func TestSuspendStopsTheGangAndUnsuspendStartsIt(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 2)
	pids := t.TempDir()
	id := e.submit(t, `spec:
  tasks:
  - name: job
    train:
      runtime: plain
      numNodes: 2
      command: [sh, -c, 'test "$KILN_ATTEMPT" -ge 2 && exit 0; echo $$ > `+pids+`/$$; exec sleep 300']
      resourcesPerNode: {cpu: 1}
`, nil)
	e.waitPhase(t, id, "job", apiv1.PhaseRunning)
	waitFiles(t, pids, 2)
	if err := e.Suspend(t.Context(), id, true); err != nil {
		t.Fatal(err)
	}
	suspended := e.waitPhase(t, id, "job", apiv1.PhaseSuspended)
	if !hasCond(suspended, apiv1.ConditionSuspended) {
		t.Errorf("conditions = %+v, want Suspended", suspended.Conditions)
	}
	if r := suspended.Replicas; len(r) != 1 || r[0].Stopped != 2 || r[0].Failed != 0 {
		t.Errorf("replicas = %+v, want both processes counted as stopped, none as failed", r)
	}
	if run, _ := e.store.GetRun(t.Context(), id); run.Status.Phase != apiv1.PhaseSuspended || !strings.Contains(run.Status.Message, "kiln unsuspend") {
		t.Errorf("suspended run = %s %q, want a message saying how to resume it", run.Status.Phase, run.Status.Message)
	}
	entries, _ := os.ReadDir(pids)
	for _, f := range entries {
		var pid int
		if _, err := fmtSscan(f.Name(), &pid); err == nil && syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d of the suspended gang still runs", pid)
		}
	}
	if err := e.Suspend(t.Context(), id, false); err != nil {
		t.Fatal(err)
	}
	job := nodeOf(e.wait(t, id), "job")
	if job.Phase != apiv1.PhaseSucceeded || len(job.Attempts) != 2 || job.Attempts[0].Code != apiv1.CodeSuspended {
		t.Fatalf("job = %s with attempts %+v, want Succeeded on attempt 2 after a suspended first", job.Phase, job.Attempts)
	}
	if hasCond(job, apiv1.ConditionSuspended) {
		t.Error("the Suspended condition is still True after unsuspend")
	}
}

func waitFiles(t *testing.T, dir string, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if entries, _ := os.ReadDir(dir); len(entries) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d files appeared in %s", n, dir)
		}
		<-time.After(10 * time.Millisecond)
	}
}

func TestPriorityThenFirstComeWithBackfill(t *testing.T) {
	t.Parallel()
	order := func(t *testing.T, bigPriority int) []string {
		e := newEngine(t, 2)
		log := filepath.Join(t.TempDir(), "log")
		step := func(name string) string {
			return `[sh, -c, 'echo start-` + name + ` >> ` + log + `; sleep 0.3; echo end-` + name + ` >> ` + log + `']`
		}
		id := e.submit(t, `spec:
  tasks:
  - {name: hog, command: `+step("hog")+`, resources: {cpu: 1}}
  - {name: big, command: `+step("big")+`, resources: {cpu: 2}, priority: `+fmt.Sprint(bigPriority)+`}
  - {name: small, command: `+step("small")+`, resources: {cpu: 1}}
`, nil)
		if run := e.wait(t, id); run.Status.Phase != apiv1.PhaseSucceeded {
			t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
		}
		b, _ := os.ReadFile(log)
		return strings.Fields(string(b))
	}
	before := func(events []string, a, b string) bool {
		return slices.Index(events, a) < slices.Index(events, b)
	}
	t.Run("equal priority: the small task backfills", func(t *testing.T) {
		t.Parallel()
		if ev := order(t, 0); !before(ev, "start-small", "start-big") {
			t.Errorf("events %v: small should start beside hog, before big", ev)
		}
	})
	t.Run("higher priority: the small task waits behind big", func(t *testing.T) {
		t.Parallel()
		if ev := order(t, 5); !before(ev, "end-big", "start-small") {
			t.Errorf("events %v: small must not start before big, which outranks it, has run", ev)
		}
	})
}
