package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/slurmtest"
	"kiln.dev/kiln/internal/store/pgtest"
)

// slurmHome is a kiln home whose configuration runs tasks on the Slurm
// test cluster, each job named with the test's prefix (cancelled when the
// test ends), the attempts' files under the home (this machine is the
// cluster's shared filesystem).
func slurmHome(t *testing.T) (string, *slurmtest.Cluster) {
	t.Helper()
	c := slurmtest.Connect(t)
	home := newHome(t)
	writeFile(t, home, "config.yaml", fmt.Sprintf("backend: slurm\nslurm:\n  conf: %s\n  prefix: %s\n  poll: 200ms\n  sbatchArgs: [%s]\n", c.Conf, c.Prefix, slurmtest.Exclude))
	return home, c
}

// slurmJobs returns the names of the test's jobs Slurm still queues or runs.
func slurmJobs(t *testing.T, c *slurmtest.Cluster) []string {
	t.Helper()
	out, err := c.Command("squeue", "-h", "-t", "PENDING,RUNNING,COMPLETING,SUSPENDED", "-o", "%j")
	if err != nil {
		t.Fatalf("squeue: %v: %s", err, out)
	}
	var mine []string
	for _, name := range strings.Fields(out) {
		if strings.HasPrefix(name, c.Prefix+".") {
			mine = append(mine, name)
		}
	}
	return mine
}

// TestSlurmRunsThePipelineExample runs the README's example pipeline on
// the Slurm cluster as written: every task once, its outputs and logs
// read back through kiln.
func TestSlurmRunsThePipelineExample(t *testing.T) {
	t.Parallel()
	home, _ := slurmHome(t)
	r := kilnIn(t, "", nil, "--home", home, "run", filepath.Join(repoRoot(), "examples", "pipeline.yaml"))
	if r.code != 0 {
		t.Fatalf("kiln run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := runs(t, home)[0].ID
	run := describe(t, home, id)
	for _, n := range run.Status.Nodes {
		if n.Phase != apiv1.PhaseSucceeded || len(n.Attempts) != 1 {
			t.Errorf("task %s is %s after %d attempts, want Succeeded after 1", n.Name, n.Phase, len(n.Attempts))
		}
	}
	if l := kiln(t, home, "logs", string(id), "evaluate"); l.code != 0 || !strings.Contains(l.stdout, "best: lr=") {
		t.Errorf("kiln logs of evaluate: %d %q %s", l.code, l.stdout, l.stderr)
	}
}

// TestSlurmRunsTheDDPExample runs the PyTorch DDP TrainJob example on two
// Slurm nodes: four ranks meet through gloo at the address of the
// allocation's first node and end with the same weights.
func TestSlurmRunsTheDDPExample(t *testing.T) {
	t.Parallel()
	home, _ := slurmHome(t)
	env := frameworkEnv(t)
	r := kilnIn(t, "", env, "--home", home, "run", filepath.Join(repoRoot(), "examples", "training", "torch-ddp.yaml"))
	if r.code != 0 {
		t.Fatalf("kiln run: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	id := runs(t, home)[0].ID
	l := kilnWithEnv(t, env, home, "logs", string(id), "trainer")
	for _, want := range []string{"node-0-0 | rank 0/4", "node-1-1 | rank 3/4"} {
		if !strings.Contains(l.stdout, want) {
			t.Errorf("kiln logs lacks %q:\n%s%s", want, l.stdout, l.stderr)
		}
	}
	if strings.Count(l.stdout, "identical_weights=True") != 4 {
		t.Errorf("want four ranks with identical weights:\n%s", l.stdout)
	}
}

// TestSlurmKillNineThenResumeSubmitsNothingTwice kills kiln run while
// Slurm jobs of its run wait and run; kiln resume adopts them from the
// cluster: every task starts exactly once and succeeds with one attempt.
func TestSlurmKillNineThenResumeSubmitsNothingTwice(t *testing.T) {
	t.Parallel()
	home, c := slurmHome(t)
	dir := t.TempDir()
	ledger, gate := filepath.Join(dir, "ledger"), filepath.Join(dir, "go")
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: adopt}
spec:
  tasks:
  - {name: a, command: [sh, -c, 'echo a >> `+ledger+`; until [ -e `+gate+` ]; do sleep 0.1; done']}
  - {name: b, command: [sh, -c, 'echo b >> `+ledger+`; until [ -e `+gate+` ]; do sleep 0.1; done']}
  - {name: c, dependsOn: [a, b], command: [sh, -c, 'echo c >> `+ledger+`']}
`)
	first := startKiln(t, home, "run", wf)
	waitFor(t, "tasks a and b to start on the cluster", func() bool { return lines(ledger) == 2 })
	killNine(t, first)
	if jobs := slurmJobs(t, c); len(jobs) != 2 {
		t.Fatalf("Slurm runs %v after kiln was killed, want a's and b's jobs", jobs)
	}
	if err := touch(gate); err != nil {
		t.Fatal(err)
	}
	if r := kiln(t, home, "resume"); r.code != 0 {
		t.Fatalf("kiln resume: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, _ := os.ReadFile(ledger)
	if got := strings.Fields(string(b)); len(got) != 3 || got[2] != "c" {
		t.Errorf("ledger = %q, want a and b once each, then c: a task was started twice", b)
	}
	run := describe(t, home, runs(t, home)[0].ID)
	if run.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run is %s: %s", run.Status.Phase, run.Status.Message)
	}
	for _, n := range run.Status.Nodes {
		if len(n.Attempts) != 1 {
			t.Errorf("task %s has %d attempts, want 1", n.Name, len(n.Attempts))
		}
	}
}

// TestSlurmCancelCancelsExactlyTheRunsJobs cancels a run whose task runs
// as a Slurm job beside another run's: its job gets SIGTERM and leaves
// the queue; the other run's job runs on.
func TestSlurmCancelCancelsExactlyTheRunsJobs(t *testing.T) {
	t.Parallel()
	home, c := slurmHome(t)
	dir := t.TempDir()
	wait := func(name string) string {
		return writeFile(t, dir, name+".yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: `+name+`}
spec:
  tasks:
  - {name: main, command: [sh, -c, 'trap "echo term >> `+dir+`/`+name+`; exit 143" TERM; echo up >> `+dir+`/`+name+`; while true; do sleep 0.1; done']}
`)
	}
	doomed := startKiln(t, home, "run", wait("doomed"))
	t.Cleanup(func() { _ = doomed.Process.Kill(); _ = doomed.Wait() })
	other := startKiln(t, home, "run", wait("other"))
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	waitFor(t, "both jobs to run", func() bool {
		return lines(filepath.Join(dir, "doomed")) == 1 && lines(filepath.Join(dir, "other")) == 1
	})
	var id apiv1.RunID
	for _, r := range runs(t, home) {
		if strings.HasPrefix(string(r.ID), "doomed-") {
			id = r.ID
		}
	}
	if r := kiln(t, home, "cancel", string(id)); r.code != 0 {
		t.Fatalf("kiln cancel: %d %s", r.code, r.stderr)
	}
	_ = doomed.Wait()
	waitFor(t, "the cancelled job to leave Slurm's queue", func() bool {
		jobs := slurmJobs(t, c)
		return len(jobs) == 1 && !strings.Contains(jobs[0], "."+string(id)+".")
	})
	if b, _ := os.ReadFile(filepath.Join(dir, "doomed")); string(b) != "up\nterm\n" {
		t.Errorf("the cancelled task wrote %q, want up then term: it was not stopped politely", b)
	}
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseCancelled {
		t.Errorf("cancelled run is %s", run.Status.Phase)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "other")); string(b) != "up\n" {
		t.Errorf("the other run's task wrote %q: it was stopped too", b)
	}
}

// slurmChain is a run of n tasks one after another, each running a while.
func slurmChain(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata:\n  name: schain\nspec:\n  tasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: t%d\n    command: [sh, -c, 'echo %d; sleep 2']\n", i, i)
		if i > 0 {
			fmt.Fprintf(&b, "    dependsOn: [t%d]\n", i-1)
		}
	}
	return b.String()
}

// TestReplicasOnSlurmAdoptJobsFromTheCluster runs two replicas, each with
// a home of its own (as on two machines) and one shared slurm.dir, on one
// PostgreSQL and the Slurm test cluster; the leader is killed twice while
// jobs run, and each time the other adopts the runs from the cluster:
// every run succeeds, every task with one attempt and one job.
func TestReplicasOnSlurmAdoptJobsFromTheCluster(t *testing.T) {
	t.Parallel()
	c := slurmtest.Connect(t)
	dsn := pgtest.Start(t).NewDatabase(t)
	config := fmt.Sprintf("backend: slurm\nslurm:\n  dir: %s\n  conf: %s\n  prefix: %s\n  poll: 200ms\n  sbatchArgs: [%s]\n", c.Dir, c.Conf, c.Prefix, slurmtest.Exclude)
	rs := startReplicas(t, dsn, 2, replicaOptions{ownHomes: true, config: config})
	_, term := rs.leader(t, 0)
	const tasks = 4
	ids := submitAll(t, rs, slurmChain(tasks), 3)
	for k := range 2 {
		waitFor(t, "a job of the test's to run", func() bool { return len(slurmJobs(t, c)) > 0 })
		lead, _ := rs.leader(t, 0)
		lead.kill9()
		_, term = rs.leader(t, term)
		rs.start(t, lead)
		t.Logf("kill %d: term %d leads", k+1, term)
	}
	waitAllDone(t, rs, ids, 3*time.Minute)
	out, err := c.Command("squeue", "-h", "-t", "all", "-o", "%j")
	if err != nil {
		t.Fatalf("squeue: %v: %s", err, out)
	}
	for _, id := range ids {
		run, err := rs.any(0).GetRun(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status.Phase != apiv1.PhaseSucceeded {
			t.Errorf("run %s is %s: %s", id, run.Status.Phase, run.Status.Message)
		}
		for _, n := range run.Status.Nodes {
			if len(n.Attempts) != 1 {
				t.Errorf("run %s task %s has %d attempts, want 1: %+v", id, n.Name, len(n.Attempts), n.Attempts)
			}
		}
		if jobs := strings.Count(out, c.Prefix+"."+string(id)+"."); jobs != tasks {
			t.Errorf("run %s made %d Slurm jobs, want %d (one per task)", id, jobs, tasks)
		}
	}
}
