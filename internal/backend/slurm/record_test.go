package slurm

import (
	"slices"
	"strings"
	"testing"
	"time"

	"kiln.dev/kiln/internal/job"
)

func TestSbatchArgsMapTheTasksResources(t *testing.T) {
	t.Parallel()
	b := &Backend{cfg: Config{Prefix: "kiln", Partition: "gpu", Account: "lab", QOS: "high", SbatchArgs: []string{"--constraint=a100"}}}
	spec := &job.Spec{
		ID:        job.AttemptID{Run: "r", Node: "n", Number: 2},
		Processes: []job.Process{{Host: 0}, {Host: 1}, {Host: 1}},
		Container: job.Container{MilliCPU: 1500, Memory: 3<<30 + 1, GPU: 2, TimeLimit: 90 * time.Second},
	}
	args := b.sbatchArgs("/shared/runs/r/n/2", spec)
	for _, want := range []string{
		"--job-name=kiln.r.n.2", "--comment=kiln-attempt=r/n/2", "--nodes=2", "--no-requeue",
		"--cpus-per-task=2", "--mem=3073M", "--gres=gpu:2", "--time=3",
		"--partition=gpu", "--account=lab", "--qos=high", "--constraint=a100",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("sbatch args lack %s: %v", want, args)
		}
	}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--export="); ok && (strings.Contains(v, "ALL") || !strings.Contains(v, "PATH")) {
			t.Errorf("sbatch exports %s, want PATH and what the commands need, never all of kiln's environment", v)
		}
	}
	if args[len(args)-1] != "/shared/runs/r/n/2/job.sh" {
		t.Errorf("sbatch's last argument = %s, want the batch script", args[len(args)-1])
	}
}

func TestStatusFromTheRecordAndSlurmsState(t *testing.T) {
	t.Parallel()
	var r record
	for _, line := range []string{
		"start 1000", "exit 1 3 0 2000", "exit 0 137 1 3000", "exit 2 0 1 3000", "done 4000", "exit 9",
	} {
		r.parse(strings.Fields(line))
	}
	if !r.done || len(r.exits) != 3 || r.started.UnixNano() != 1000 {
		t.Fatalf("record = %+v", r)
	}
	b := &Backend{cfg: Config{Dir: t.TempDir()}}
	spec := &job.Spec{
		ID:        job.AttemptID{Run: "r", Node: "n", Number: 1},
		Processes: []job.Process{{Name: "node-0"}, {Name: "node-1", Host: 1}, {Name: "node-2", Host: 2}},
	}
	st := b.exited(spec, r, "")
	if st.ExitCode != 3 || st.Failed != "node-1" || st.System || st.Processes["node-0"] != -1 {
		t.Errorf("gang = %+v, want exit 3 decided by node-1", st)
	}
	if !slices.Equal(st.StoppedProcesses, []string{"node-0", "node-2"}) {
		t.Errorf("stopped = %v, want node-0 and node-2", st.StoppedProcesses)
	}

	// The node failed under the job: the processes it never saw end were lost.
	var cut record
	cut.parse(strings.Fields("start 1000"))
	cut.jobID = "7"
	st = b.exited(spec, cut, "NODE_FAIL")
	if !st.System || st.Succeeded() || st.Code != "KLN-6030" || !strings.Contains(st.Message, "NODE_FAIL") {
		t.Errorf("a job whose node failed = %+v, want a system failure", st)
	}
	st = b.exited(spec, cut, "CANCELLED")
	if st.System || !st.Stopped || st.Succeeded() {
		t.Errorf("a job cancelled outright = %+v, want it stopped", st)
	}
}

func TestExitStatusesAbove128AreSignals(t *testing.T) {
	t.Parallel()
	for status, want := range map[int][2]any{0: {0, ""}, 3: {3, ""}, 137: {-1, "SIGKILL"}, 143: {-1, "SIGTERM"}, 255: {255, ""}} {
		code, sig := exitOf(status)
		if code != want[0] || sig != want[1] {
			t.Errorf("exitOf(%d) = %d, %q; want %v", status, code, sig, want)
		}
	}
}

func TestProcessScriptQuotesWhatItRuns(t *testing.T) {
	t.Parallel()
	spec := &job.Spec{Processes: []job.Process{{Command: []string{"echo", "it's $HOME"}, Env: []string{"A=b c", "PATH=/x"}}}}
	s := procScript("/d", spec, 0)
	for _, want := range []string{`'echo' 'it'\''s $HOME'`, `'A=b c'`, `'KILN_OUTPUTS=/d/outputs'`, `( PATH='/x'; command -v 'echo' )`, `${SLURMD_NODENAME+"SLURMD_NODENAME=$SLURMD_NODENAME"}`} {
		if !strings.Contains(s, want) {
			t.Errorf("process script lacks %s:\n%s", want, s)
		}
	}
}
