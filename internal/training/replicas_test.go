package training

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// Finish gives each replica type its own command and env, keeping the
// framework's variables, and leaves a process without a command to its
// image's entrypoint with the args.
func TestFinishAppliesReplicasAndTheEntrypoint(t *testing.T) {
	t.Parallel()
	in := &Input{
		Command: []string{"--job_type=Train", "--model_path=/tmp/m"}, Entrypoint: true, Env: []string{"BASE=1"},
		Replicas: map[string]Replica{
			"Worker": {Command: []string{"--job_type=Train"}, Entrypoint: true, Env: []string{"OWN=2"}},
			"PS":     {Command: []string{"python3", "ps.py"}},
		},
	}
	spec := &job.Spec{Processes: []job.Process{
		{Name: "master-0", Command: in.Command, Env: []string{"BASE=1", "RANK=0"}},
		{Name: "worker-0", Command: in.Command, Env: []string{"BASE=1", "RANK=1"}},
		{Name: "ps-0", Command: in.Command, Env: []string{"BASE=1"}},
	}}
	Finish(in, spec)
	want := []job.Process{
		{Name: "master-0", Args: []string{"--job_type=Train", "--model_path=/tmp/m"}, Env: []string{"BASE=1", "RANK=0"}},
		{Name: "worker-0", Args: []string{"--job_type=Train"}, Env: []string{"OWN=2", "RANK=1"}},
		{Name: "ps-0", Command: []string{"python3", "ps.py"}, Env: []string{"BASE=1"}},
	}
	if diff := cmp.Diff(want, spec.Processes); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
}

// A replica type's own restart policy decides for its processes; the
// others keep their group's. Types the framework has not, and policies
// kiln has not, are refused where the runtime writes them.
func TestReplicaRestartPolicies(t *testing.T) {
	t.Parallel()
	p := apiv1.MLPolicy{XGBoost: &apiv1.XGBoostPolicy{}, TrainingOperator: &apiv1.OperatorEnv{
		Leader: "Master", Replicas: map[string]apiv1.OperatorReplica{"Worker": {RestartPolicy: apiv1.RestartPolicyExitCode}},
	}}
	rt := apiv1.TrainingRuntime{Metadata: apiv1.ObjectMeta{Name: "op"}, Spec: apiv1.TrainingRuntimeSpec{MLPolicy: &p}}
	task := apiv1.TrainTask{
		Runtime: "op", Trainer: apiv1.Trainer{NumNodes: i32(3), Args: []string{"--x"}},
		Policy: &apiv1.JobPolicy{RestartPolicy: apiv1.RestartPolicyNever},
	}
	j, problems := Merge(&task, NewRuntimes(rt))
	if len(problems) > 0 {
		t.Fatalf("an entrypoint-only operator job: %v", problems)
	}
	for _, tc := range []struct {
		process string
		want    apiv1.RestartPolicy
		of      string
	}{
		{"master-0", apiv1.RestartPolicyNever, "replica group node"},
		{"worker-1", apiv1.RestartPolicyExitCode, "replica type Worker"},
	} {
		if got, of := j.RestartPolicyOf(tc.process); got != tc.want || of != tc.of {
			t.Errorf("%s: %s (%s), want %s (%s)", tc.process, got, of, tc.want, tc.of)
		}
	}
	if ok, _ := Restartable(apiv1.RestartPolicyExitCode, 130, ""); !ok {
		t.Error("ExitCode does not restart exit 130")
	}
	p.TrainingOperator.Replicas = map[string]apiv1.OperatorReplica{"Launcher": {}, "Worker": {RestartPolicy: "Sometimes", Env: []apiv1.EnvVar{{Name: "WORKER_ADDRS", Value: "x"}}}}
	got := CheckRuntime(&apiv1.TrainingRuntimeSpec{MLPolicy: &p})
	var fields []string
	for _, pr := range got {
		fields = append(fields, string(pr.Code)+" "+pr.Field)
	}
	want := []string{
		string(apiv1.CodeInvalidValue) + " mlPolicy.trainingOperator.replicas.Launcher",
		string(apiv1.CodeRunPolicyValue) + " mlPolicy.trainingOperator.replicas.Worker.restartPolicy",
		string(apiv1.CodeReservedEnv) + " mlPolicy.trainingOperator.replicas.Worker.env[0].name",
	}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// Only an operator's job (or a plain one) may leave its command to the
// image; an MPI launcher may not.
func TestOnlyOperatorJobsMayRunTheEntrypoint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    apiv1.MLPolicy
		want bool
	}{
		{apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{}}, false},
		{apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}, true},
		{apiv1.MLPolicy{MPI: &apiv1.MPIPolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}, false},
		{apiv1.MLPolicy{Plain: &apiv1.PlainPolicy{}}, true},
	} {
		p := tc.p
		rt := apiv1.TrainingRuntime{Metadata: apiv1.ObjectMeta{Name: "op"}, Spec: apiv1.TrainingRuntimeSpec{MLPolicy: &p}}
		task := apiv1.TrainTask{Runtime: "op", Trainer: apiv1.Trainer{Args: []string{"--x"}}}
		_, problems := Merge(&task, NewRuntimes(rt))
		refused := len(problems) == 1 && problems[0].Code == apiv1.CodeRequired && problems[0].Field == "command"
		if refused == tc.want || (!refused && len(problems) > 0) {
			t.Errorf("%v: problems %v; want the entrypoint allowed: %v", Frameworks(&p), problems, tc.want)
		}
	}
}

// PaddleJob's collective mode: every worker is told the job, the nodes
// and worker 0's address.
func TestPaddleSetsTheOperatorsEnv(t *testing.T) {
	t.Parallel()
	p := apiv1.MLPolicy{Paddle: &apiv1.PaddlePolicy{}, TrainingOperator: &apiv1.OperatorEnv{}}
	rt := apiv1.TrainingRuntime{Metadata: apiv1.ObjectMeta{Name: "op"}, Spec: apiv1.TrainingRuntimeSpec{MLPolicy: &p}}
	task := apiv1.TrainTask{Runtime: "op", Trainer: apiv1.Trainer{NumNodes: i32(2), Command: []string{"python", "-m", "paddle.distributed.launch", "t.py"}}}
	j, problems := Merge(&task, NewRuntimes(rt))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	in := &Input{
		Command: task.Command, Env: []string{"BASE=1"}, Network: job.Network{Hosts: []string{"h0", "h1"}, Ports: []int{36543}},
		Attempt: job.AttemptID{Run: "R1", Node: "pd", Number: 1},
	}
	spec := &job.Spec{}
	if err := j.Plugin.Build(j, in, spec); err != nil {
		t.Fatal(err)
	}
	node := []string{"PYTHONUNBUFFERED=1", "PADDLE_JOB_ID=r1-pd", "PADDLE_NNODES=2", "PADDLE_MASTER=h0:36543"}
	if diff := cmp.Diff(map[string][]string{"worker-0": node, "worker-1": node}, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

// An MPI command that names /etc/mpi/hostfile, where the operators mount
// it, reads the attempt's hostfile instead.
func TestMPIHostfileArgumentsNameTheAttemptsHostfile(t *testing.T) {
	t.Parallel()
	cmd := []string{"mpirun", "--hostfile", "/etc/mpi/hostfile", "--hostfile=/etc/mpi/hostfile", "sh", "-c", "cat /etc/mpi/hostfile"}
	spec := build(t, "mpi", apiv1.TrainTask{Trainer: apiv1.Trainer{Command: cmd}})
	want := []string{"mpirun", "--hostfile", "/att/hostfile", "--hostfile=/att/hostfile", "sh", "-c", "cat /att/hostfile"}
	if diff := cmp.Diff(want, spec.Processes[0].Command); diff != "" {
		t.Errorf("launcher command (-want +got):\n%s", diff)
	}
}
