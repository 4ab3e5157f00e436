package training

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

func q(s string) *apiv1.Quantity { v := apiv1.Quantity(s); return &v }
func i32(n int32) *int32         { return &n }

// build merges a 2-node job of runtime name and builds its spec on a
// two-host network with ports from 29400.
func build(t *testing.T, name string, task apiv1.TrainTask) *job.Spec {
	t.Helper()
	task.Runtime = name
	if task.NumNodes == nil {
		task.NumNodes = i32(2)
	}
	if task.Command == nil {
		task.Command = []string{"python3", "train.py"}
	}
	j, problems := Merge(&task, NewRuntimes())
	if len(problems) > 0 {
		t.Fatalf("Merge: %v", problems)
	}
	in := &Input{
		Command: task.Command, Env: []string{"BASE=1"}, Dir: "/att",
		Network: job.Network{Hosts: []string{"h0", "h1", "h2"}, Ports: []int{29400, 29401, 29402}},
	}
	spec := &job.Spec{}
	if err := j.Plugin.Build(j, in, spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

// envOf returns the named process's variables, BASE=1 left out.
func envOf(spec *job.Spec) map[string][]string {
	out := map[string][]string{}
	for _, p := range spec.Processes {
		for _, kv := range p.Env {
			if kv != "BASE=1" {
				out[p.Name] = append(out[p.Name], kv)
			}
		}
	}
	return out
}

func TestTorchTwoByTwo(t *testing.T) {
	t.Parallel()
	spec := build(t, "torch-distributed", apiv1.TrainTask{Trainer: apiv1.Trainer{NumProcPerNode: q("2")}})
	pet := func(node string) []string {
		return []string{"PET_NNODES=2", "PET_NPROC_PER_NODE=2", "PET_NODE_RANK=" + node, "PET_MASTER_ADDR=h0", "PET_MASTER_PORT=29400"}
	}
	proc := func(node, rank, local string) []string {
		return append(pet(node), "MASTER_ADDR=h0", "MASTER_PORT=29400", "WORLD_SIZE=4", "RANK="+rank,
			"LOCAL_RANK="+local, "LOCAL_WORLD_SIZE=2", "NODE_RANK="+node)
	}
	want := map[string][]string{
		"node-0-0": proc("0", "0", "0"), "node-0-1": proc("0", "1", "1"),
		"node-1-0": proc("1", "2", "0"), "node-1-1": proc("1", "3", "1"),
	}
	if diff := cmp.Diff(want, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}

	spec = build(t, "torch-distributed", apiv1.TrainTask{Trainer: apiv1.Trainer{
		NumProcPerNode: q("2"),
		Command:        []string{"torchrun", "train.py"},
	}})
	want = map[string][]string{"node-0": pet("0"), "node-1": pet("1")}
	if diff := cmp.Diff(want, envOf(spec)); diff != "" {
		t.Errorf("torchrun env (-want +got):\n%s", diff)
	}
}

func TestMPITwoByTwo(t *testing.T) {
	t.Parallel()
	spec := build(t, "mpi", apiv1.TrainTask{Trainer: apiv1.Trainer{NumProcPerNode: q("2")}})
	if diff := cmp.Diff(map[string]string{"hostfile": "h0 slots=2\nh1 slots=2\n"}, spec.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	want := []string{"mpirun", "-np", "4", "python3", "train.py"}
	if len(spec.Processes) != 1 || spec.Leader != "launcher" || !cmp.Equal(want, spec.Processes[0].Command) {
		t.Errorf("processes = %+v, leader %q; want one launcher running %v", spec.Processes, spec.Leader, want)
	}
	if !strings.Contains(strings.Join(spec.Processes[0].Env, " "), "OMPI_MCA_orte_default_hostfile=/att/hostfile") {
		t.Errorf("launcher env lacks the hostfile: %v", spec.Processes[0].Env)
	}
	if got := hostfile([]string{"127.0.0.1", "127.0.0.1"}, 2); got != "127.0.0.1 slots=4\n" {
		t.Errorf("one-machine hostfile = %q, want one line with all slots", got)
	}
}

func TestXGBoostJAXAndTensorFlow(t *testing.T) {
	t.Parallel()
	xgb := envOf(build(t, "xgboost", apiv1.TrainTask{}))
	if diff := cmp.Diff([]string{
		"DMLC_TRACKER_URI=h0", "DMLC_TRACKER_PORT=29400", "DMLC_TASK_ID=1", "DMLC_NUM_WORKER=2",
		"MASTER_ADDR=h0", "MASTER_PORT=29401", "WORLD_SIZE=2", "RANK=1",
	}, xgb["node-1"]); diff != "" {
		t.Errorf("xgboost node-1 env (-want +got):\n%s", diff)
	}
	jx := envOf(build(t, "jax", apiv1.TrainTask{}))
	if diff := cmp.Diff([]string{
		"JAX_COORDINATOR_ADDRESS=h0:29400", "JAX_COORDINATOR_PORT=29400",
		"JAX_NUM_PROCESSES=2", "JAX_PROCESS_ID=1",
	}, jx["node-1"]); diff != "" {
		t.Errorf("jax node-1 env (-want +got):\n%s", diff)
	}
	tf := build(t, "tensorflow", apiv1.TrainTask{})
	env := envOf(tf)
	want := `TF_CONFIG={"cluster":{"chief":["h0:29400"],"worker":["h1:29401"]},"task":{"type":"worker","index":0}}`
	if diff := cmp.Diff([]string{want}, env["worker-0"]); diff != "" || tf.Leader != "chief-0" {
		t.Errorf("tensorflow worker-0 env (-want +got):\n%s; leader %q", diff, tf.Leader)
	}
}

func TestMergeProblems(t *testing.T) {
	t.Parallel()
	bad := NewRuntimes(apiv1.TrainingRuntime{Metadata: apiv1.ObjectMeta{Name: "empty"}})
	cases := map[string]struct {
		task apiv1.TrainTask
		want []Problem
	}{
		"unknown runtime":           {task: apiv1.TrainTask{Runtime: "nope"}, want: []Problem{{apiv1.CodeUnknownRuntime, "runtime", `no runtime is named "nope"`}}},
		"runtime without ml policy": {task: apiv1.TrainTask{Runtime: "empty"}, want: []Problem{{apiv1.CodeNoMLPolicy, "runtime", `runtime "empty" has no mlPolicy`}}},
		"zero nodes, reserved env, no command": {
			task: apiv1.TrainTask{Runtime: "torch-distributed", Trainer: apiv1.Trainer{
				NumNodes: i32(0),
				Env:      []apiv1.EnvVar{{Name: "RANK", Value: "3"}},
			}},
			want: []Problem{
				{apiv1.CodeOutOfRange, "numNodes", "numNodes is 0, out of range: it lies from 1 to 1024"},
				{apiv1.CodeRequired, "command", "the trainer needs a command, here or in the runtime's template"},
				{apiv1.CodeReservedEnv, "env[0].name", `"RANK" is set by the torch runtime and may not be set by the job`},
			},
		},
		"processes per node past int64": {
			task: apiv1.TrainTask{Runtime: "torch-distributed", Trainer: apiv1.Trainer{
				Command: []string{"x"}, NumNodes: i32(2), NumProcPerNode: q("9223372036854775807"),
			}},
			want: []Problem{{apiv1.CodeOutOfRange, "numProcPerNode", `numProcPerNode is "9223372036854775807", out of range: it lies from 1 to 1024 (or auto, cpu or gpu)`}},
		},
		"more processes than a job runs": {
			task: apiv1.TrainTask{Runtime: "torch-distributed", Trainer: apiv1.Trainer{
				Command: []string{"x"}, NumNodes: i32(1024), NumProcPerNode: q("1024"),
			}},
			want: []Problem{{apiv1.CodeOutOfRange, "numNodes", "1024 nodes of 1024 processes is 1048576 processes, out of range: a job runs from 1 to 1024"}},
		},
		"a gang that asks for more memory than one request may hold": {
			task: apiv1.TrainTask{Runtime: "plain", Trainer: apiv1.Trainer{
				Command: []string{"x"}, NumNodes: i32(4), ResourcesPerNode: &apiv1.Resources{Memory: "1Ei"},
			}},
			want: []Problem{{apiv1.CodeOutOfRange, "resourcesPerNode.memory", "4 nodes of 1152921504606846976 bytes each ask for more than 1Ei of memory, the most one job may take"}},
		},
		"a resolved runtime with negative numbers": {
			task: apiv1.TrainTask{Runtime: "x", Trainer: apiv1.Trainer{Command: []string{"x"}}, ResolvedRuntime: &apiv1.TrainingRuntimeSpec{
				MLPolicy:      &apiv1.MLPolicy{TensorFlow: &apiv1.TensorFlowPolicy{NumPS: i32(-3)}},
				GangPolicy:    &apiv1.GangPolicy{ScheduleTimeoutSeconds: i32(-1)},
				FailurePolicy: &apiv1.FailurePolicy{RetryableExitCodes: []int32{1, 256}},
			}},
			want: []Problem{
				{apiv1.CodeOutOfRange, "resolvedRuntime.mlPolicy.tensorflow.numPS", "numPS is -3, out of range: it lies from 0 to 1024"},
				{apiv1.CodeOutOfRange, "resolvedRuntime.gangPolicy.scheduleTimeoutSeconds", "scheduleTimeoutSeconds is -1, out of range: it lies from 1 to 31536000"},
				{apiv1.CodeOutOfRange, "resolvedRuntime.failurePolicy.retryableExitCodes[1]", "retryableExitCodes[1] is 256, out of range: it lies from 0 to 255"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, got := Merge(&tc.task, bad)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGangRequestCoversEveryNode(t *testing.T) {
	t.Parallel()
	j, problems := Merge(&apiv1.TrainTask{Runtime: "torch-distributed", Trainer: apiv1.Trainer{
		Command:  []string{"x"},
		NumNodes: i32(2), NumProcPerNode: q("2"),
	}}, NewRuntimes())
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if got := j.Request(); got.MilliCPU != 4000 {
		t.Errorf("request = %v, want 4 CPUs: one per process on each of 2 nodes", got)
	}
}
