package training

import (
	"fmt"
	"net"
	"strconv"

	"kiln.dev/kiln/internal/job"
)

// jax runs jax.distributed: one process per node; process 0 hosts the
// coordinator the others connect to.
type jax struct{}

func (jax) Name() string { return "jax" }

func (jax) Reserved() []string {
	return []string{"JAX_COORDINATOR_ADDRESS", "JAX_COORDINATOR_PORT", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"}
}

func (jax) Ports(*Job) int { return 1 }

func (jax) Build(j *Job, in *Input, spec *job.Spec) error {
	port := strconv.Itoa(in.Network.Ports[0])
	coord := net.JoinHostPort(in.Network.Hosts[0], port)
	for i := range j.NumNodes {
		env := with(in.Env, "JAX_COORDINATOR_ADDRESS", coord, "JAX_COORDINATOR_PORT", port,
			"JAX_NUM_PROCESSES", strconv.Itoa(j.NumNodes), "JAX_PROCESS_ID", strconv.Itoa(i))
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Command: in.Command, Env: env, Host: i})
	}
	if j.Policy.TrainingOperator != nil {
		operatorJAX(j, in, spec)
	}
	return nil
}
