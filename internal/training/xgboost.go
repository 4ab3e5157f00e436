package training

import (
	"fmt"
	"strconv"

	"kiln.dev/kiln/internal/job"
)

// xgboost runs distributed XGBoost: one worker per node. As in Kubeflow
// Trainer, rank 0 starts the rabit tracker (xgboost.tracker.RabitTracker)
// on DMLC_TRACKER_URI:DMLC_TRACKER_PORT and every worker joins it.
type xgboost struct{}

func (xgboost) Name() string { return "xgboost" }

func (xgboost) Reserved() []string {
	return []string{
		"DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER",
		"MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK",
	}
}

// Ports are the tracker's and the master's, and training-operator's
// WORKER_PORT when its environment is asked for.
func (xgboost) Ports(j *Job) int {
	if j.Policy.TrainingOperator != nil {
		return 3
	}
	return 2
}

func (xgboost) Build(j *Job, in *Input, spec *job.Spec) error {
	host, tracker, master := in.Network.Hosts[0], strconv.Itoa(in.Network.Ports[0]), strconv.Itoa(in.Network.Ports[1])
	n := strconv.Itoa(j.NumNodes)
	for i := range j.NumNodes {
		rank := strconv.Itoa(i)
		env := with(in.Env, "DMLC_TRACKER_URI", host, "DMLC_TRACKER_PORT", tracker, "DMLC_TASK_ID", rank,
			"DMLC_NUM_WORKER", n, "MASTER_ADDR", host, "MASTER_PORT", master, "WORLD_SIZE", n, "RANK", rank)
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Command: in.Command, Env: env, Host: i})
	}
	if j.Policy.TrainingOperator != nil {
		operatorXGBoost(j, in, spec)
	}
	return nil
}
