package training

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"

	"kiln.dev/kiln/internal/job"
)

// tensorflow gives every replica TF_CONFIG: node 0 is the chief, the other
// nodes are workers, and numPS parameter servers follow. The chief's exit
// decides the job, as in training-operator's TFJob.
type tensorflow struct{}

func (tensorflow) Name() string { return "tensorflow" }

func (tensorflow) Reserved() []string { return []string{"TF_CONFIG"} }

func (tensorflow) Ports(j *Job) int { return j.Replicas() }

type tfConfig struct {
	Cluster map[string][]string `json:"cluster"`
	Task    tfTask              `json:"task"`
}

type tfTask struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

func (tensorflow) Build(j *Job, in *Input, spec *job.Spec) error {
	if j.Policy.TrainingOperator != nil {
		return operatorTF(j, in, spec)
	}
	roles := make([]tfTask, j.Replicas())
	cluster := map[string][]string{}
	for r := range roles {
		switch {
		case r == 0:
			roles[r] = tfTask{"chief", 0}
		case r < j.NumNodes:
			roles[r] = tfTask{"worker", r - 1}
		default:
			roles[r] = tfTask{"ps", r - j.NumNodes}
		}
		addr := net.JoinHostPort(in.Network.Hosts[r], strconv.Itoa(in.Network.Ports[r]))
		cluster[roles[r].Type] = append(cluster[roles[r].Type], addr)
	}
	for r, task := range roles {
		b, err := json.Marshal(tfConfig{Cluster: cluster, Task: task}) // map keys are sorted: deterministic
		if err != nil {
			return err
		}
		spec.Processes = append(spec.Processes, job.Process{
			Name:    fmt.Sprintf("%s-%d", task.Type, task.Index),
			Command: in.Command, Env: with(in.Env, "TF_CONFIG", string(b)), Host: r,
		})
	}
	spec.Leader = "chief-0"
	return nil
}
