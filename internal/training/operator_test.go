package training

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// buildOperator builds task (runtime "op") with the runtime policy p on
// a network of hosts h0.. and ports 29400..
func buildOperator(t *testing.T, p apiv1.MLPolicy, task apiv1.TrainTask) *job.Spec {
	t.Helper()
	rt := apiv1.TrainingRuntime{Metadata: apiv1.ObjectMeta{Name: "op"}, Spec: apiv1.TrainingRuntimeSpec{MLPolicy: &p}}
	if problems := CheckRuntime(&rt.Spec); len(problems) > 0 {
		t.Fatalf("CheckRuntime: %v", problems)
	}
	task.Runtime = "op"
	task.Command = []string{"python3", "train.py"}
	j, problems := Merge(&task, NewRuntimes(rt))
	if len(problems) > 0 {
		t.Fatalf("Merge: %v", problems)
	}
	hosts := []string{"h0", "h1", "h2", "h3"}
	in := &Input{
		Command: task.Command, Env: []string{"BASE=1"}, Dir: "/att",
		Network: job.Network{Hosts: hosts[:j.Replicas()], Ports: []int{29400, 29401, 29402, 29403}[:j.Plugin.Ports(j)]},
	}
	spec := &job.Spec{}
	if err := j.Plugin.Build(j, in, spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestOperatorTorchWithMasterSetsTheControllersEnv(t *testing.T) {
	t.Parallel()
	spec := buildOperator(t, apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{}, TrainingOperator: &apiv1.OperatorEnv{Leader: "Master"}},
		apiv1.TrainTask{Trainer: apiv1.Trainer{NumNodes: i32(3), NumProcPerNode: q("2")}})
	node := func(rank string) []string {
		return []string{
			"PYTHONUNBUFFERED=1", "MASTER_PORT=29400", "PET_MASTER_PORT=29400", "MASTER_ADDR=h0", "PET_MASTER_ADDR=h0",
			"WORLD_SIZE=6", "RANK=" + rank, "PET_NODE_RANK=" + rank, "PET_NPROC_PER_NODE=2", "PET_NNODES=3",
		}
	}
	want := map[string][]string{"master-0": node("0"), "worker-0": node("1"), "worker-1": node("2")}
	if diff := cmp.Diff(want, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if spec.Leader != "master-0" {
		t.Errorf("leader %q, want master-0: the operator ends the job with its Master", spec.Leader)
	}
}

func TestOperatorTorchPassesNprocPerNodeAsWritten(t *testing.T) {
	t.Parallel()
	spec := buildOperator(t, apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}},
		apiv1.TrainTask{Trainer: apiv1.Trainer{NumNodes: i32(2), NumProcPerNode: q("auto")}})
	// Without a Master the operator sets no address, rank or world size:
	// torchrun (or the script) finds them itself.
	want := map[string][]string{
		"worker-0": {"PYTHONUNBUFFERED=1", "PET_NPROC_PER_NODE=auto", "PET_NNODES=2"},
		"worker-1": {"PYTHONUNBUFFERED=1", "PET_NPROC_PER_NODE=auto", "PET_NNODES=2"},
	}
	if diff := cmp.Diff(want, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if len(spec.Processes) != 2 || spec.Leader != "" {
		t.Errorf("processes %d leader %q, want one process per node and no leader", len(spec.Processes), spec.Leader)
	}
}

func TestOperatorTFConfig(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		leader string
		nodes  int32
		want   map[string][]string
	}{
		"chief, one worker and a parameter server": {
			leader: "Chief", nodes: 2, want: map[string][]string{
				"chief-0":  {`TF_CONFIG={"cluster":{"chief":["h0:29400"],"ps":["h2:29402"],"worker":["h1:29401"]},"task":{"type":"chief","index":0},"environment":"cloud"}`},
				"worker-0": {`TF_CONFIG={"cluster":{"chief":["h0:29400"],"ps":["h2:29402"],"worker":["h1:29401"]},"task":{"type":"worker","index":0},"environment":"cloud"}`},
				"ps-0":     {`TF_CONFIG={"cluster":{"chief":["h0:29400"],"ps":["h2:29402"],"worker":["h1:29401"]},"task":{"type":"ps","index":0},"environment":"cloud"}`},
			},
		},
		"master is the cluster's master key": {
			leader: "Master", nodes: 1, want: map[string][]string{
				"master-0": {`TF_CONFIG={"cluster":{"master":["h0:29400"],"ps":["h1:29401"]},"task":{"type":"master","index":0},"environment":"cloud"}`},
				"ps-0":     {`TF_CONFIG={"cluster":{"master":["h0:29400"],"ps":["h1:29401"]},"task":{"type":"ps","index":0},"environment":"cloud"}`},
			},
		},
		"workers alone count from 0": {
			nodes: 2, want: map[string][]string{
				"worker-0": {`TF_CONFIG={"cluster":{"ps":["h2:29402"],"worker":["h0:29400","h1:29401"]},"task":{"type":"worker","index":0},"environment":"cloud"}`},
				"worker-1": {`TF_CONFIG={"cluster":{"ps":["h2:29402"],"worker":["h0:29400","h1:29401"]},"task":{"type":"worker","index":1},"environment":"cloud"}`},
				"ps-0":     {`TF_CONFIG={"cluster":{"ps":["h2:29402"],"worker":["h0:29400","h1:29401"]},"task":{"type":"ps","index":0},"environment":"cloud"}`},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec := buildOperator(t, apiv1.MLPolicy{TensorFlow: &apiv1.TensorFlowPolicy{NumPS: i32(1)}, TrainingOperator: &apiv1.OperatorEnv{Leader: tc.leader}},
				apiv1.TrainTask{Trainer: apiv1.Trainer{NumNodes: &tc.nodes}})
			if diff := cmp.Diff(tc.want, envOf(spec)); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if spec.Leader != spec.Processes[0].Name {
				t.Errorf("leader %q, want the first replica %q", spec.Leader, spec.Processes[0].Name)
			}
		})
	}
}

func TestOperatorTFJobOfOneReplicaHasNoTFConfig(t *testing.T) {
	t.Parallel()
	spec := buildOperator(t, apiv1.MLPolicy{TensorFlow: &apiv1.TensorFlowPolicy{NumPS: i32(0)}, TrainingOperator: &apiv1.OperatorEnv{}},
		apiv1.TrainTask{Trainer: apiv1.Trainer{NumNodes: i32(1)}})
	if diff := cmp.Diff(map[string][]string{}, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestOperatorXGBoostAddsWorkerAddresses(t *testing.T) {
	t.Parallel()
	spec := buildOperator(t, apiv1.MLPolicy{XGBoost: &apiv1.XGBoostPolicy{}, TrainingOperator: &apiv1.OperatorEnv{Leader: "Master"}},
		apiv1.TrainTask{Trainer: apiv1.Trainer{NumNodes: i32(3)}})
	node := func(rank string) []string {
		return []string{
			"DMLC_TRACKER_URI=h0", "DMLC_TRACKER_PORT=29400", "DMLC_TASK_ID=" + rank, "DMLC_NUM_WORKER=3",
			"MASTER_ADDR=h0", "MASTER_PORT=29401", "WORLD_SIZE=3", "RANK=" + rank,
			"PYTHONUNBUFFERED=1", "WORKER_PORT=29402", "WORKER_ADDRS=h1,h2",
		}
	}
	want := map[string][]string{"master-0": node("0"), "worker-0": node("1"), "worker-1": node("2")}
	if diff := cmp.Diff(want, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if spec.Leader != "master-0" {
		t.Errorf("leader %q, want master-0", spec.Leader)
	}
}

func TestOperatorJAXSetsTheCoordinatorApart(t *testing.T) {
	t.Parallel()
	spec := buildOperator(t, apiv1.MLPolicy{JAX: &apiv1.JAXPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}},
		apiv1.TrainTask{Trainer: apiv1.Trainer{NumNodes: i32(2)}})
	node := func(id string) []string {
		return []string{
			"JAX_COORDINATOR_ADDRESS=h0:29400", "JAX_COORDINATOR_PORT=29400", "JAX_NUM_PROCESSES=2", "JAX_PROCESS_ID=" + id,
			"PYTHONUNBUFFERED=1", "COORDINATOR_PORT=29400", "COORDINATOR_ADDRESS=h0", "NUM_PROCESSES=2", "PROCESS_ID=" + id,
		}
	}
	want := map[string][]string{"worker-0": node("0"), "worker-1": node("1")}
	if diff := cmp.Diff(want, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestOperatorPolicyIsChecked(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		policy apiv1.MLPolicy
		field  string
	}{
		"a leader the framework has not": {apiv1.MLPolicy{JAX: &apiv1.JAXPolicy{}, TrainingOperator: &apiv1.OperatorEnv{Leader: "Master"}}, "mlPolicy.trainingOperator.leader"},
		"xgboost needs its master":       {apiv1.MLPolicy{XGBoost: &apiv1.XGBoostPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}, "mlPolicy.trainingOperator.leader"},
		"plain has no operator":          {apiv1.MLPolicy{Plain: &apiv1.PlainPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}, "mlPolicy.trainingOperator"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			problems := CheckRuntime(&apiv1.TrainingRuntimeSpec{MLPolicy: &tc.policy})
			if len(problems) != 1 || problems[0].Field != tc.field || problems[0].Code != apiv1.CodeInvalidValue {
				t.Errorf("problems %+v, want one KLN-1012 at %s", problems, tc.field)
			}
		})
	}
}

func TestOperatorVariablesAreReserved(t *testing.T) {
	t.Parallel()
	rt := apiv1.TrainingRuntime{Metadata: apiv1.ObjectMeta{Name: "op"}, Spec: apiv1.TrainingRuntimeSpec{
		MLPolicy: &apiv1.MLPolicy{JAX: &apiv1.JAXPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}},
	}}
	task := apiv1.TrainTask{Runtime: "op", Trainer: apiv1.Trainer{Command: []string{"x"}, Env: []apiv1.EnvVar{{Name: "OK", Value: "1"}, {Name: "PROCESS_ID", Value: "3"}}}}
	_, problems := Merge(&task, NewRuntimes(rt))
	if len(problems) != 1 || problems[0].Field != "env[1].name" || problems[0].Code != apiv1.CodeReservedEnv {
		t.Errorf("problems %+v, want KLN-1016 at env[1].name", problems)
	}
}
