package training

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// This file gives a runtime whose mlPolicy sets trainingOperator the
// environment of Kubeflow training-operator's kubeflow.org/v1
// controllers (pkg/controller.v1/<framework> in its v1.9 tree): one
// process per node, named after its replica, with the variables the
// controller puts in that replica's pod. MPI needs nothing of it: the
// operator's launcher reads the hostfile kiln's launcher writes.

// operatorLeaders lists the replica types node 0 may have, per framework
// ("" for none: every node is a worker).
func operatorLeaders(framework string) []string {
	switch framework {
	case "torch":
		return []string{"", "Master"}
	case "xgboost":
		return []string{"Master"}
	case "tensorflow":
		return []string{"", "Chief", "Master"}
	case "jax", "mpi", "paddle":
		return []string{""}
	}
	return nil
}

// operatorVars are the variables the operator's controller sets beyond
// the framework plugin's own Reserved list: a job may not set them.
func operatorVars(framework string) []string {
	switch framework {
	case "xgboost":
		return []string{"WORKER_PORT", "WORKER_ADDRS"}
	case "jax":
		return []string{"COORDINATOR_ADDRESS", "COORDINATOR_PORT", "NUM_PROCESSES", "PROCESS_ID"}
	}
	return nil
}

// checkOperator checks a policy's trainingOperator against its framework.
func (m *merger) checkOperator(p *apiv1.MLPolicy) {
	names := Frameworks(p)
	if p.TrainingOperator == nil || len(names) != 1 {
		return
	}
	leaders := operatorLeaders(names[0])
	switch {
	case leaders == nil:
		m.add(apiv1.CodeInvalidValue, "mlPolicy.trainingOperator", "trainingOperator applies to torch, tensorflow, xgboost, jax, mpi and paddle, not %s", names[0])
	case !slices.Contains(leaders, p.TrainingOperator.Leader):
		m.add(apiv1.CodeInvalidValue, "mlPolicy.trainingOperator.leader", "leader is %q; for %s it is one of %s", p.TrainingOperator.Leader, names[0], quoteAll(leaders))
	}
	m.checkReplicas(p, names[0])
}

// checkReplicas checks the replica types a policy's trainingOperator
// gives their own command, env or restart policy: types of the framework,
// and restart policies kiln knows.
func (m *merger) checkReplicas(p *apiv1.MLPolicy, framework string) {
	types := []string{"Worker"}
	for _, l := range operatorLeaders(framework) {
		if l != "" {
			types = append(types, l)
		}
	}
	if framework == "tensorflow" {
		types = append(types, "PS")
	}
	if framework == "mpi" {
		types = nil // the launcher is the job's only process
	}
	for _, t := range slices.Sorted(maps.Keys(p.TrainingOperator.Replicas)) {
		field := "mlPolicy.trainingOperator.replicas." + t
		if !slices.Contains(types, t) {
			m.add(apiv1.CodeInvalidValue, field, "replica type %q is not one of %s's: %s", t, framework, quoteAll(types))
			continue
		}
		r := p.TrainingOperator.Replicas[t]
		m.restartPolicy(field+".restartPolicy", r.RestartPolicy)
		if plugin, ok := pluginFor([]string{framework}); ok {
			m.envAt(field+".env", r.Env, plugin)
		}
		m.operatorEnv(field+".env", r.Env, p)
	}
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// operatorEnv refuses a job's variables that the operator's controller
// sets; field is where env is written ("env").
func (m *merger) operatorEnv(field string, env []apiv1.EnvVar, p *apiv1.MLPolicy) {
	names := Frameworks(p)
	if p.TrainingOperator == nil || len(names) != 1 {
		return
	}
	for i, e := range env {
		if slices.Contains(operatorVars(names[0]), e.Name) {
			m.add(apiv1.CodeReservedEnv, fmt.Sprintf("%s[%d].name", field, i), "%q is set by training-operator's environment (mlPolicy.trainingOperator) and may not be set by the job", e.Name)
		}
	}
}

// Entrypoint reports whether the job may run without a command, its
// image's entrypoint with the args: a job converted from the operator's
// (mlPolicy.trainingOperator), whose containers may, or a plain one;
// never an MPI job, whose launcher kiln starts with mpirun.
func (j *Job) Entrypoint() bool {
	return j.Policy.MPI == nil && (j.Policy.TrainingOperator != nil || j.Policy.Plain != nil)
}

// Replica is what the processes of one replica type run in place of the
// trainer's, ready to build: see apiv1.OperatorReplica.
type Replica struct {
	// Command is the program and its args, templates expanded; nil: the
	// trainer's. With Entrypoint it holds the args alone.
	Command    []string
	Entrypoint bool
	// Env is the processes' base environment in place of Input.Env; nil:
	// the trainer's.
	Env []string
}

// ReplicaType is the training-operator replica type of a process the
// operator's environment named ("master-0" is Master, "ps-1" PS); "" for
// another.
func ReplicaType(process string) string {
	prefix, _, _ := strings.Cut(process, "-")
	switch prefix {
	case "master", "chief", "worker":
		return strings.ToUpper(prefix[:1]) + prefix[1:]
	case "ps":
		return "PS"
	}
	return ""
}

// RestartPolicyOf returns the restart policy that decides a failure of
// process: its replica type's own (mlPolicy.trainingOperator.replicas),
// else its group's; of says whose it is ("replica type Worker",
// "replica group node").
func (j *Job) RestartPolicyOf(process string) (p apiv1.RestartPolicy, of string) {
	if op := j.Policy.TrainingOperator; op != nil {
		t := ReplicaType(process)
		if r, ok := op.Replicas[t]; ok && r.RestartPolicy != "" {
			return r.RestartPolicy, "replica type " + t
		}
	}
	g := GroupOf(process)
	return j.RestartPolicy(g), "replica group " + g
}

// Finish applies what is left after a plugin built spec's processes:
// each replica type's own command and env, then the image's entrypoint
// for a process without a command (Command empty, its args in Args).
// in.Env must be the start of every process's env, as with() keeps it.
func Finish(in *Input, spec *job.Spec) {
	for i := range spec.Processes {
		p := &spec.Processes[i]
		entry := in.Entrypoint
		if r, ok := in.Replicas[ReplicaType(p.Name)]; ok {
			if r.Command != nil {
				p.Command, entry = r.Command, r.Entrypoint
			}
			if r.Env != nil && len(p.Env) >= len(in.Env) && slices.Equal(p.Env[:len(in.Env)], in.Env) {
				p.Env = append(append([]string(nil), r.Env...), p.Env[len(in.Env):]...)
			}
		}
		if entry {
			p.Args, p.Command = p.Command, nil
		}
	}
}

// replicaName is node n's process: "master-0" for a leader's node 0,
// else "worker-<index among the workers>".
func replicaName(leader string, n int) string {
	if leader == "" {
		return fmt.Sprintf("worker-%d", n)
	}
	if n == 0 {
		return strings.ToLower(leader) + "-0"
	}
	return fmt.Sprintf("worker-%d", n-1)
}

// operatorTorch is envvar.go and master.go of the PyTorchJob controller:
// with a Master, every node gets its address and port, WORLD_SIZE (nodes
// times a numeric nprocPerNode, else nodes) and its node's RANK; every
// node gets PET_NNODES and PET_NPROC_PER_NODE as written. The Master's
// exit decides the job.
func operatorTorch(j *Job, in *Input, spec *job.Spec) {
	lead := j.Policy.TrainingOperator.Leader
	host, port := in.Network.Hosts[0], strconv.Itoa(in.Network.Ports[0])
	nproc := 1
	if n, err := strconv.Atoi(j.ProcsAsWritten); err == nil {
		nproc = n
	}
	for n := range j.NumNodes {
		env := with(in.Env, "PYTHONUNBUFFERED", "1")
		if lead != "" {
			env = with(env, "MASTER_PORT", port, "PET_MASTER_PORT", port, "MASTER_ADDR", host, "PET_MASTER_ADDR", host,
				"WORLD_SIZE", strconv.Itoa(j.NumNodes*nproc), "RANK", strconv.Itoa(n), "PET_NODE_RANK", strconv.Itoa(n))
		}
		env = with(env, "PET_NPROC_PER_NODE", j.ProcsAsWritten, "PET_NNODES", strconv.Itoa(j.NumNodes))
		spec.Processes = append(spec.Processes, job.Process{Name: replicaName(lead, n), Command: in.Command, Env: env, Host: n})
	}
	if lead != "" {
		spec.Leader = replicaName(lead, 0)
	}
}

// operatorTFConfig is the TFJob controller's TF_CONFIG.
type operatorTFConfig struct {
	Cluster     map[string][]string `json:"cluster"`
	Task        tfTask              `json:"task"`
	Environment string              `json:"environment"`
}

// operatorTF is tensorflow.go of the TFJob controller: TF_CONFIG's
// cluster has the leader's key (chief or master) if there is one, worker
// and ps, and environment "cloud"; a job of one replica gets none. The
// leader's exit decides the job, else worker 0's.
func operatorTF(j *Job, in *Input, spec *job.Spec) error {
	lead := strings.ToLower(j.Policy.TrainingOperator.Leader)
	roles := make([]tfTask, j.Replicas())
	cluster := map[string][]string{}
	for r := range roles {
		switch {
		case r == 0 && lead != "":
			roles[r] = tfTask{lead, 0}
		case r < j.NumNodes && lead != "":
			roles[r] = tfTask{"worker", r - 1}
		case r < j.NumNodes:
			roles[r] = tfTask{"worker", r}
		default:
			roles[r] = tfTask{"ps", r - j.NumNodes}
		}
		addr := net.JoinHostPort(in.Network.Hosts[r], strconv.Itoa(in.Network.Ports[r]))
		cluster[roles[r].Type] = append(cluster[roles[r].Type], addr)
	}
	for r, task := range roles {
		env := in.Env
		if len(roles) > 1 {
			b, err := json.Marshal(operatorTFConfig{Cluster: cluster, Task: task, Environment: "cloud"})
			if err != nil {
				return err
			}
			env = with(env, "TF_CONFIG", string(b))
		}
		spec.Processes = append(spec.Processes, job.Process{
			Name: fmt.Sprintf("%s-%d", task.Type, task.Index), Command: in.Command, Env: env, Host: r,
		})
	}
	spec.Leader = spec.Processes[0].Name
	return nil
}

// operatorXGBoost adds what the XGBoostJob controller (xgboost.go) sets
// beyond kiln's variables, which it shares (MASTER_ADDR, MASTER_PORT,
// WORLD_SIZE, RANK): WORKER_PORT and WORKER_ADDRS, the workers' hosts,
// for LightGBM. The Master's exit decides the job.
func operatorXGBoost(j *Job, in *Input, spec *job.Spec) {
	lead := j.Policy.TrainingOperator.Leader
	var workers []string
	for n := range j.NumNodes {
		if n > 0 || lead == "" {
			workers = append(workers, in.Network.Hosts[n])
		}
	}
	for i := range spec.Processes {
		p := &spec.Processes[i]
		p.Name = replicaName(lead, i)
		p.Env = with(p.Env, "PYTHONUNBUFFERED", "1")
		if j.NumNodes > 1 {
			p.Env = with(p.Env, "WORKER_PORT", strconv.Itoa(in.Network.Ports[2]), "WORKER_ADDRS", strings.Join(workers, ","))
		}
	}
	if lead != "" {
		spec.Leader = replicaName(lead, 0)
	}
}

// operatorJAX adds the JAXJob controller's variables (envvar.go) to
// kiln's: worker 0's host and the port apart, the number of processes
// and this one's ID.
func operatorJAX(j *Job, in *Input, spec *job.Spec) {
	port := strconv.Itoa(in.Network.Ports[0])
	for i := range spec.Processes {
		p := &spec.Processes[i]
		p.Name = replicaName("", i)
		p.Env = with(p.Env, "PYTHONUNBUFFERED", "1", "COORDINATOR_PORT", port, "COORDINATOR_ADDRESS", in.Network.Hosts[0],
			"NUM_PROCESSES", strconv.Itoa(j.NumNodes), "PROCESS_ID", strconv.Itoa(i))
	}
}
