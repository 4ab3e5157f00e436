package training

import (
	"fmt"
	"path/filepath"
	"strconv"

	"kiln.dev/kiln/internal/job"
)

// torch runs PyTorch distributed. If the command is torchrun, kiln starts
// one torchrun per node and hands it the PET_* variables torchrun reads for
// its flags; otherwise kiln starts numProcPerNode processes per node itself,
// each with the variables torch.distributed's env:// init reads. An
// elastic job (see elastic.go) runs torchrun agents that meet through the
// c10d rendezvous.
type torch struct{}

func (torch) Name() string { return "torch" }

func (torch) Reserved() []string {
	return []string{
		"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT",
		"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK",
		"PET_RDZV_BACKEND", "PET_RDZV_ENDPOINT", "PET_RDZV_ID", "PET_MAX_RESTARTS",
	}
}

func (torch) Ports(*Job) int { return 1 }

func (torch) Build(j *Job, in *Input, spec *job.Spec) error {
	if j.Elastic != nil {
		// torchrun's rendezvous env; a PyTorchJob's elastic replicas get
		// the same from the operator.
		buildElastic(j, in, spec)
		return nil
	}
	if j.Policy.TrainingOperator != nil {
		operatorTorch(j, in, spec)
		return nil
	}
	master, port := in.Network.Hosts[0], strconv.Itoa(in.Network.Ports[0])
	nodes, procs := j.NumNodes, j.NumProcPerNode
	for n := range nodes {
		pet := with(in.Env, "PET_NNODES", strconv.Itoa(nodes), "PET_NPROC_PER_NODE", strconv.Itoa(procs),
			"PET_NODE_RANK", strconv.Itoa(n), "PET_MASTER_ADDR", master, "PET_MASTER_PORT", port)
		if isTorchrun(in.Command) {
			spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", n), Command: in.Command, Env: pet, Host: n})
			continue
		}
		for p := range procs {
			env := with(pet, "MASTER_ADDR", master, "MASTER_PORT", port, "WORLD_SIZE", strconv.Itoa(nodes*procs),
				"RANK", strconv.Itoa(n*procs+p), "LOCAL_RANK", strconv.Itoa(p), "LOCAL_WORLD_SIZE", strconv.Itoa(procs),
				"NODE_RANK", strconv.Itoa(n))
			spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d-%d", n, p), Command: in.Command, Env: env, Host: n})
		}
	}
	return nil
}

// isTorchrun reports whether cmd starts torchrun, directly or as
// python -m torch.distributed.run.
func isTorchrun(cmd []string) bool {
	if len(cmd) == 0 {
		return false
	}
	if filepath.Base(cmd[0]) == "torchrun" {
		return true
	}
	return len(cmd) >= 3 && cmd[1] == "-m" && cmd[2] == "torch.distributed.run"
}
