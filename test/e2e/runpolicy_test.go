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

func policyJob(t *testing.T, runPolicy, runtime string, nodes int, script string) string {
	t.Helper()
	return writeFile(t, t.TempDir(), "job.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: policy}
spec:
  runtimeRef: {name: %s}
  runPolicy: %s
  trainer:
    numNodes: %d
    resourcesPerNode: {cpu: 100m}
    command: [/bin/sh, -c, %q]
`, runtime, runPolicy, nodes, script))
}

// failedRun runs job, which must fail, and returns the run.
func failedRun(t *testing.T, home, job string) apiv1.Run {
	t.Helper()
	r := kiln(t, home, "run", "-q", job)
	if r.code != 1 {
		t.Fatalf("kiln run: exit %d, want 1: %s", r.code, r.stderr)
	}
	return describe(t, home, runID(t, r.stdout+r.stderr))
}

// TestRestartPolicyExitCode: under ExitCode, exit 3 is the program's own
// error and fails the job at once, backoffLimit notwithstanding; exit
// 130 (as after SIGINT) restarts the gang until backoffLimit is spent.
// A group's override wins over the job's policy.
func TestRestartPolicyExitCode(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, tc := range []struct {
		name, policy, script string
		attempts             int
		code                 apiv1.Code
	}{
		{"exit 3", "{backoffLimit: 2, restartPolicy: ExitCode}", "exit 3", 1, apiv1.CodeNotRestarted},
		{"exit 130", "{backoffLimit: 2, restartPolicy: ExitCode}", "exit 130", 3, apiv1.CodeExit},
		{"default OnFailure", "{backoffLimit: 2}", "exit 3", 3, apiv1.CodeExit},
		{"group Never", "{backoffLimit: 2, restartPolicy: OnFailure, groups: {node: {restartPolicy: Never}}}", "exit 130", 1, apiv1.CodeNotRestarted},
	} {
		run := failedRun(t, home, policyJob(t, tc.policy, "plain", 2, tc.script))
		n := nodeNamed(t, run, "trainer")
		if len(n.Attempts) != tc.attempts || n.Code != tc.code {
			t.Errorf("%s: %d attempts, code %s (%s); want %d attempts, %s", tc.name, len(n.Attempts), n.Code, n.Message, tc.attempts, tc.code)
		}
	}
	r := kiln(t, home, "run", policyJob(t, "{restartPolicy: Sometimes, groups: {launcher: {restartPolicy: Never}}}", "plain", 1, "true"))
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-1058") || !strings.Contains(r.stderr, "spec.runPolicy.restartPolicy") ||
		!strings.Contains(r.stderr, "KLN-1057") || !strings.Contains(r.stderr, "spec.runPolicy.groups.launcher") {
		t.Errorf("bad run policy: exit %d, %q; want KLN-1058 and KLN-1057 naming the fields", r.code, r.stderr)
	}
}

// TestCleanPodPolicy: rank 0 fails once rank 1 has started to sleep. All stops the
// sleeper as the job fails (it sleeps for minutes: the job could only
// end so soon by stopping it); None records the failure at once and
// leaves the sleeper to finish, its log still collected.
func TestCleanPodPolicy(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, tc := range []struct {
		policy, sleep string
		survive       bool
	}{{"All", "300", false}, {"None", "3", true}} {
		mark := filepath.Join(t.TempDir(), "started")
		script := `if [ "$RANK" = 0 ]; then while [ ! -e ` + mark + ` ]; do sleep 0.05; done; exit 1; fi; echo started; touch ` + mark + `; sleep ` + tc.sleep + `; echo survived`
		run := failedRun(t, home, policyJob(t, "{cleanPodPolicy: "+tc.policy+"}", "torch-distributed", 2, script))
		n := nodeNamed(t, run, "trainer")
		if n.Code != apiv1.CodeExit || !strings.Contains(n.Message, "node-0-0") {
			t.Errorf("%s: trainer %s %q, want KLN-3002 naming node-0-0", tc.policy, n.Code, n.Message)
		}
		logs := func() string { return kiln(t, home, "logs", string(run.ID), "trainer").stdout }
		if tc.survive {
			waitFor(t, "the process None left running to finish", func() bool { return strings.Contains(logs(), "survived") })
			continue
		}
		if got := logs(); strings.Contains(got, "survived") || !strings.Contains(got, "started") {
			t.Errorf("%s: the sleeper's log is %q; want it started and stopped", tc.policy, got)
		}
	}
}

// TestRestartPolicyNeverHoldsForAKilledRank: a rank killed by SIGKILL (as
// the out-of-memory killer does) fails a job whose restartPolicy is Never
// at once, naming the signal; the engine's system retries do not start
// the gang again against the user's policy.
func TestRestartPolicyNeverHoldsForAKilledRank(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	lock := filepath.Join(t.TempDir(), "killed")
	script := `if mkdir ` + lock + ` 2>/dev/null; then kill -9 $$; fi; exec sleep 300` // one rank kills itself
	run := failedRun(t, home, policyJob(t, "{backoffLimit: 0, restartPolicy: Never}", "plain", 2, script))
	n := nodeNamed(t, run, "trainer")
	if len(n.Attempts) != 1 || n.Code != apiv1.CodeNotRestarted || !strings.Contains(n.Message, "SIGKILL") || !strings.Contains(n.Message, "restartPolicy is Never") {
		t.Errorf("%d attempts, code %s, message %q; want one attempt failed with KLN-3026 naming SIGKILL and the policy", len(n.Attempts), n.Code, n.Message)
	}
}

// requireMemoryCaps skips a test where tasks' memory cannot be capped
// (no memory cgroup can be made), or fails it when KILN_REQUIRE_CGROUPS=1.
func requireMemoryCaps(t *testing.T, home string) {
	t.Helper()
	if local.CapsMemory(home) {
		return
	}
	if os.Getenv("KILN_REQUIRE_CGROUPS") == "1" {
		t.Fatal("KILN_REQUIRE_CGROUPS=1 but no memory cgroup can be made here")
	}
	t.Skip("no memory cgroup can be made here: tasks' memory is not capped")
}

// TestOOMKilled: a task or a rank that outgrows its declared memory is
// killed by the kernel and fails OOMKilled (KLN-6003) with its limit
// named, the task's own failure: its retries apply, the engine's system
// retries do not, and a job whose restartPolicy is Never is not started
// again.
func TestOOMKilled(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	requireMemoryCaps(t, home)
	grow := `/usr/bin/python3 -c 'b = bytearray(512 << 20)'`
	dir := t.TempDir()
	task := writeFile(t, dir, "oom.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: oom}
spec:
  tasks:
  - name: grow
    retries: {limit: 1}
    resources: {memory: 32Mi}
    command: [sh, -c, %q]
`, grow))
	run := failedRun(t, home, task)
	n := nodeNamed(t, run, "grow")
	if len(n.Attempts) != 2 || n.Code != apiv1.CodeOOMKilled || !strings.Contains(n.Message, "OOMKilled") || !strings.Contains(n.Message, "32Mi") {
		t.Errorf("task: %d attempts, code %s, message %q; want 2 attempts (retries: 1) failed with KLN-6003 naming the 32Mi limit", len(n.Attempts), n.Code, n.Message)
	}
	out := kiln(t, home, "describe", "run", string(run.ID)).stdout
	if !strings.Contains(out, "KLN-6003") || !strings.Contains(out, "OOMKilled") {
		t.Errorf("describe does not say the task was OOMKilled:\n%s", out)
	}

	job := writeFile(t, dir, "oom-job.yaml", fmt.Sprintf(`apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: oom-job}
spec:
  runtimeRef: {name: torch-distributed}
  runPolicy: {backoffLimit: 2, restartPolicy: Never}
  trainer:
    numNodes: 2
    resourcesPerNode: {cpu: 100m, memory: 32Mi}
    command: [/bin/sh, -c, %q]
`, `if [ "$RANK" = 1 ]; then `+grow+`; exit $?; fi; exec sleep 120`))
	run = failedRun(t, home, job)
	n = nodeNamed(t, run, "trainer")
	if len(n.Attempts) != 1 || !strings.Contains(n.Message, "OOMKilled") || !strings.Contains(n.Message, "node-1") {
		t.Errorf("job: %d attempts, code %s, message %q; want one attempt, the message naming node-1 OOMKilled", len(n.Attempts), n.Code, n.Message)
	}
}

// TestOOMKilledUnderIsolation: a task isolated from kiln (its project's
// account, or Landlock) still starts in its memory cgroup and is told
// OOMKilled.
func TestOOMKilledUnderIsolation(t *testing.T) {
	t.Parallel()
	for _, mode := range isolationModes() {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			home := newHome(t)
			requireMemoryCaps(t, home)
			base, admin, _ := startServeAs(t, home, nil, nil, "--isolation", mode)
			run := postRunAs(t, base, admin, "", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: oom}
spec:
  tasks:
  - name: grow
    resources: {memory: 32Mi}
    command: [/usr/bin/python3, -c, 'b = bytearray(512 << 20)']
`)
			waitServed(t, base, admin, run.ID, apiv1.PhaseFailed)
			out := kilnWithEnv(t, []string{"KILN_SERVER=" + base, "KILN_TOKEN=" + admin}, t.TempDir(), "describe", "run", string(run.ID)).stdout
			if !strings.Contains(out, "KLN-6003") || !strings.Contains(out, "OOMKilled") {
				t.Errorf("describe does not say the isolated task was OOMKilled:\n%s", out)
			}
		})
	}
}
