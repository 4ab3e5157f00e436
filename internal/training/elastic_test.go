package training

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// elasticRuntime is a torch runtime with the given elastic policy.
func elasticRuntime(e *apiv1.ElasticPolicy) *Runtimes {
	return NewRuntimes(apiv1.TrainingRuntime{
		Metadata: apiv1.ObjectMeta{Name: "elastic"},
		Spec:     apiv1.TrainingRuntimeSpec{MLPolicy: &apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{NumProcPerNode: q("1"), ElasticPolicy: e}}},
	})
}

func TestElasticAgentsMeetThroughC10dOnNodeZero(t *testing.T) {
	t.Parallel()
	task := apiv1.TrainTask{Runtime: "elastic", Trainer: apiv1.Trainer{
		Command: []string{"torchrun", "train.py"},
		Env:     []apiv1.EnvVar{{Name: "PET_RDZV_CONF", Value: "last_call_timeout=2"}},
	}}
	j, problems := Merge(&task, elasticRuntime(&apiv1.ElasticPolicy{MinNodes: i32(2), MaxNodes: i32(3), MaxRestarts: i32(5)}))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if j.NumNodes != 3 || j.Replicas() != 3 {
		t.Errorf("nodes %d, replicas %d; want maxNodes (3) for both", j.NumNodes, j.Replicas())
	}
	in := &Input{
		Command: task.Command, Env: []string{"BASE=1", "PET_RDZV_CONF=last_call_timeout=2"},
		Attempt: job.AttemptID{Run: "r-1", Node: "trainer", Number: 2},
		Network: job.Network{Hosts: []string{"h0", "h1"}, Ports: []int{29400}}, // admitted with 2 of 3
	}
	spec := &job.Spec{}
	if err := j.Plugin.Build(j, in, spec); err != nil {
		t.Fatal(err)
	}
	agent := func(host bool) []string {
		conf := "PET_RDZV_CONF=last_call_timeout=2,is_host=false"
		if host {
			conf = "PET_RDZV_CONF=last_call_timeout=2,is_host=true"
		}
		return []string{
			conf, "PET_RDZV_BACKEND=c10d", "PET_RDZV_ENDPOINT=h0:29400", "PET_RDZV_ID=r-1-trainer-2",
			"PET_NNODES=2:3", "PET_MAX_RESTARTS=5", "PET_NPROC_PER_NODE=1", "KILN_NODES=2",
		}
	}
	want := map[string][]string{"node-0": agent(true), "node-1": agent(false)}
	if diff := cmp.Diff(want, envOf(spec)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if spec.MinHosts != 2 || spec.Processes[1].Host != 1 || !cmp.Equal(spec.Processes[1].Command, task.Command) {
		t.Errorf("spec = %+v, want minHosts 2 and node-1 on host 1 running torchrun", spec)
	}
}

func TestElasticDefaults(t *testing.T) {
	t.Parallel()
	j, problems := Merge(&apiv1.TrainTask{Runtime: "elastic", Trainer: apiv1.Trainer{
		Command: []string{"python3", "-m", "torch.distributed.run", "t.py"},
	}}, elasticRuntime(&apiv1.ElasticPolicy{MinNodes: i32(2)}))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if diff := cmp.Diff(&Elastic{MinNodes: 2, MaxNodes: 2, MaxRestarts: 3}, j.Elastic); diff != "" {
		t.Errorf("elastic (-want +got):\n%s", diff)
	}
}

func TestElasticProblems(t *testing.T) {
	t.Parallel()
	torchrun := []string{"torchrun", "t.py"}
	cases := map[string]struct {
		policy *apiv1.ElasticPolicy
		rt     func(*apiv1.TrainingRuntimeSpec)
		task   apiv1.Trainer
		want   []Problem
	}{
		"minNodes above maxNodes": {
			policy: &apiv1.ElasticPolicy{MinNodes: i32(3), MaxNodes: i32(2)},
			task:   apiv1.Trainer{Command: torchrun},
			want: []Problem{{
				apiv1.CodeElasticRange, "resolvedRuntime.mlPolicy.torch.elasticPolicy.minNodes",
				"minNodes is 3, more than maxNodes 2: an elastic job runs on from minNodes to maxNodes nodes",
			}},
		},
		"numbers out of range": {
			policy: &apiv1.ElasticPolicy{MinNodes: i32(0), MaxRestarts: i32(-1)},
			task:   apiv1.Trainer{Command: torchrun},
			want: []Problem{
				{apiv1.CodeOutOfRange, "resolvedRuntime.mlPolicy.torch.elasticPolicy.minNodes", "minNodes is 0, out of range: it lies from 1 to 1024"},
				{apiv1.CodeOutOfRange, "resolvedRuntime.mlPolicy.torch.elasticPolicy.maxRestarts", "maxRestarts is -1, out of range: it lies from 0 to 1024"},
			},
		},
		"numNodes in the runtime": {
			policy: &apiv1.ElasticPolicy{MaxNodes: i32(2)},
			rt: func(rt *apiv1.TrainingRuntimeSpec) {
				rt.MLPolicy.NumNodes, rt.Template = i32(2), &apiv1.Trainer{NumNodes: i32(2)}
			},
			task: apiv1.Trainer{Command: torchrun},
			want: []Problem{
				{apiv1.CodeElasticNumNodes, "resolvedRuntime.mlPolicy.numNodes", "numNodes may not be set beside torch.elasticPolicy: minNodes and maxNodes size an elastic job"},
				{apiv1.CodeElasticNumNodes, "resolvedRuntime.template.numNodes", "numNodes may not be set beside torch.elasticPolicy: minNodes and maxNodes size an elastic job"},
			},
		},
		"numNodes in the job and a command that is not torchrun": {
			policy: &apiv1.ElasticPolicy{MinNodes: i32(1), MaxNodes: i32(2)},
			task:   apiv1.Trainer{Command: []string{"python3", "t.py"}, NumNodes: i32(2)},
			want: []Problem{
				{apiv1.CodeElasticNumNodes, "numNodes", `numNodes may not be set: runtime "x" sets torch.elasticPolicy, whose minNodes (1) and maxNodes (2) size the job`},
				{apiv1.CodeElasticCommand, "command", `command starts "python3", not torchrun: an elastic job (runtime "x" sets torch.elasticPolicy) runs one torchrun agent per node`},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rt := &apiv1.TrainingRuntimeSpec{MLPolicy: &apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{ElasticPolicy: tc.policy}}}
			if tc.rt != nil {
				tc.rt(rt)
			}
			_, got := Merge(&apiv1.TrainTask{Runtime: "x", Trainer: tc.task, ResolvedRuntime: rt}, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
