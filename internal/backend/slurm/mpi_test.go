package slurm

import (
	"errors"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// An mpirun launcher whose hostfile names more nodes than its processes
// run on is refused with a reason, before anything is submitted: its
// ranks would need ssh between the nodes.
func TestLauncherReachingOtherNodesIsRefused(t *testing.T) {
	b := &Backend{cfg: Config{Dir: t.TempDir()}, launching: map[job.AttemptID]chan struct{}{}}
	spec := &job.Spec{
		ID:        job.AttemptID{Run: "mpi-aaaaa", Node: "trainer", Number: 1},
		Files:     map[string]string{"hostfile": hostTokenOf(0) + " slots=2\n" + hostTokenOf(1) + " slots=2\n"},
		Processes: []job.Process{{Name: "launcher", Command: []string{"mpirun", "-np", "4", "python3", "x.py"}}},
	}
	if n := namedHosts(spec); n != 2 {
		t.Errorf("namedHosts = %d, want 2", n)
	}
	var refused *job.RefusedError
	if err := b.Launch(t.Context(), spec); !errors.As(err, &refused) || refused.Code != string(apiv1.CodeSlurmRefused) {
		t.Errorf("Launch = %v, want a refusal %s", err, apiv1.CodeSlurmRefused)
	}
	spec.Processes = append(spec.Processes, job.Process{Name: "worker", Host: 1, Command: []string{"true"}})
	if n, h := namedHosts(spec), hostCount(spec); n != h {
		t.Errorf("a gang with a process on each named host: named %d, hosts %d", n, h)
	}
}
