package training

import (
	"net"
	"strconv"
	"strings"

	"kiln.dev/kiln/internal/job"
)

// paddle runs PaddlePaddle's collective mode as training-operator's
// PaddleJob controller does (pkg/controller.v1/paddlepaddle/envvar.go in
// its v1.9 tree): one process per node, named worker-<n>, each told the
// job's ID, the number of nodes and worker 0's address, where
// paddle.distributed.launch meets. Trainer v2 has no Paddle runtime: this
// environment is the only one Paddle jobs are written for.
type paddle struct{}

func (paddle) Name() string { return "paddle" }

func (paddle) Reserved() []string {
	return []string{"PADDLE_MASTER", "PADDLE_NNODES", "PADDLE_JOB_ID", "PADDLE_SERVER_NUM", "PADDLE_TRAINER_NUM"}
}

func (paddle) Ports(*Job) int { return 1 }

// Build gives every node the operator's variables. PADDLE_JOB_ID is the
// operator's job name; kiln's is the run and node, one per job as that is.
func (paddle) Build(j *Job, in *Input, spec *job.Spec) error {
	master := net.JoinHostPort(in.Network.Hosts[0], strconv.Itoa(in.Network.Ports[0]))
	id := strings.ToLower(in.Attempt.Run + "-" + in.Attempt.Node)
	for n := range j.NumNodes {
		env := with(in.Env, "PYTHONUNBUFFERED", "1", "PADDLE_JOB_ID", id, "PADDLE_NNODES", strconv.Itoa(j.NumNodes), "PADDLE_MASTER", master)
		spec.Processes = append(spec.Processes, job.Process{Name: replicaName("", n), Command: in.Command, Env: env, Host: n})
	}
	return nil
}
