package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// frameworkEnv puts Debian's python3 (with python3-torch, python3-mpi4py
// and python3-xgboost) first in PATH for the tasks.
func frameworkEnv(t *testing.T) []string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import torch, mpi4py, xgboost").Run(); err != nil {
		t.Fatalf("Debian's python3 lacks torch, mpi4py or xgboost (make deps installs them): %v", err)
	}
	return append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH"))
}

// TestTrainingExamples runs every training example for real and checks
// what each framework's processes reported. The examples run one at a
// time: each uses every CPU of the machine.
func TestTrainingExamples(t *testing.T) {
	env := frameworkEnv(t)
	cases := []struct {
		file  string
		lines map[string]int // substring of the logs -> how many lines must hold it
	}{
		{"torch-ddp.yaml", map[string]int{"identical_weights=True": 4, "rank 3/4": 1}},
		{"torchrun-ddp.yaml", map[string]int{"identical_weights=True": 4}},
		{"torchrun-elastic.yaml", map[string]int{"done in world 3": 3}},
		{"mpi-allreduce.yaml", map[string]int{"allreduce = 10": 4}},
		{"xgboost.yaml", map[string]int{"model spread across ranks 0.00e+00": 2}},
		{"tensorflow.yaml", map[string]int{"chief-0 ok": 1, "worker-0 ok": 1, "worker-1 ok": 1, "ps-0 ok": 1}},
		{"pipeline.yaml", map[string]int{"held-out mse": 1, "identical_weights=True": 4}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			home := newHome(t)
			r := kilnWithEnv(t, env, home, "run", "-q", filepath.Join(repoRoot(), "examples", "training", tc.file))
			if r.code != 0 {
				t.Fatalf("kiln run %s exited %d\n%s%s", tc.file, r.code, r.stdout, r.stderr)
			}
			id := runs(t, home)[0].ID
			logs := kilnWithEnv(t, env, home, "logs", string(id)).stdout
			for want, n := range tc.lines {
				if got := strings.Count(logs, want); got != n {
					t.Errorf("%d log lines hold %q, want %d\n%s", got, want, n, logs)
				}
			}
			run := describe(t, home, id)
			for _, node := range run.Status.Nodes {
				if node.Phase != apiv1.PhaseSucceeded {
					t.Errorf("task %s is %s: %s", node.Name, node.Phase, node.Message)
				}
			}
		})
	}
}

func TestTrainJobBadInputIsRejectedAtSubmit(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	write := func(name, spec string) string {
		return writeFile(t, dir, name, "apiVersion: kiln.dev/v1alpha1\nkind: TrainJob\nmetadata: {name: bad}\nspec:\n"+spec)
	}
	cases := map[string]struct{ file, want string }{
		"unknown runtime":     {write("a.yaml", "  runtimeRef: {name: nope}\n  trainer: {command: [x]}\n"), "KLN-1017 " + dir + "/a.yaml:5:16: TrainJob/bad: spec.runtimeRef.name"},
		"no ml policy":        {write("b.yaml", "  runtimeRef: {name: empty}\n  trainer: {command: [x]}\n---\napiVersion: kiln.dev/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: empty}\nspec: {}\n"), "KLN-1018"},
		"zero nodes":          {write("c.yaml", "  runtimeRef: {name: torch-distributed}\n  trainer: {command: [x], numNodes: 0}\n"), "spec.trainer.numNodes"},
		"reserved env":        {write("d.yaml", "  runtimeRef: {name: xgboost}\n  trainer: {command: [x], env: [{name: DMLC_TASK_ID, value: '1'}]}\n"), "KLN-1016"},
		"larger than machine": {write("e.yaml", "  runtimeRef: {name: plain}\n  trainer: {command: [x], numNodes: 64, resourcesPerNode: {cpu: 4}}\n"), "KLN-2001"},
	}
	for name, tc := range cases {
		r := kiln(t, home, "run", tc.file)
		if r.code != 1 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", name, r.code, r.stderr, tc.want)
		}
	}
	if got := runs(t, home); len(got) != 0 {
		t.Errorf("rejected jobs left %d runs", len(got))
	}
}

func TestSuspendedTrainJobStartsOnUnsuspend(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	job := writeFile(t, t.TempDir(), "job.yaml", `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: held}
spec:
  runtimeRef: {name: plain}
  suspend: true
  trainer: {command: ["true"], numNodes: 2, resourcesPerNode: {cpu: 100m}}
`)
	run := startKiln(t, home, "run", "-q", job)
	waitFor(t, "the job to be suspended", func() bool {
		list := runs(t, home)
		return len(list) == 1 && describe(t, home, list[0].ID).Status.Nodes[0].Phase == apiv1.PhaseSuspended
	})
	id := runs(t, home)[0].ID
	if r := kiln(t, home, "unsuspend", string(id)); r.code != 0 {
		t.Fatalf("kiln unsuspend: %d %s", r.code, r.stderr)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("kiln run after unsuspend: %v", err)
	}
	if got := describe(t, home, id); got.Status.Phase != apiv1.PhaseSucceeded {
		t.Errorf("run is %s, want Succeeded", got.Status.Phase)
	}
}
