package apidoc

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// exampleWorkflow is a submission's body, as YAML.
const exampleWorkflow = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: train-eval}
spec:
  params: [{name: epochs, default: "3"}]
  tasks:
  - name: prepare
    command: [python3, prep.py, --out, "{{outputs.dir}}/data.csv"]
    outputs: {artifacts: [{name: data, path: data.csv}]}
  - name: train
    dependsOn: [prepare]
    command: [python3, train.py, --data, "{{tasks.prepare.outputs.artifacts.data}}", --epochs, "{{params.epochs}}"]
    outputs: {parameters: [{name: loss}]}
`

// exampleRun is a run of exampleWorkflow as the API answers it once it
// succeeded (the workflow as submitted is left out for brevity).
func exampleRun() apiv1.Run {
	at := func(s int) *time.Time {
		t := time.Date(2026, 11, 23, 16, 0, s, 0, time.UTC)
		return &t
	}
	exit := 0
	attempt := func(task string, from, to int) []apiv1.AttemptStatus {
		return []apiv1.AttemptStatus{{Number: 1, ID: "train-eval-x7k2p/" + task + "/1", Phase: apiv1.PhaseSucceeded, ExitCode: &exit, StartedAt: at(from), FinishedAt: at(to)}}
	}
	return apiv1.Run{
		ID: "train-eval-x7k2p", Name: "train-eval", Kind: apiv1.KindWorkflow, Project: "default",
		Params: map[string]string{"epochs": "3"}, CreatedAt: *at(0),
		Status: apiv1.RunStatus{
			Phase: apiv1.PhaseSucceeded, Message: "2 tasks succeeded", StartedAt: at(1), FinishedAt: at(9),
			Nodes: []apiv1.NodeStatus{
				{Name: "prepare", Phase: apiv1.PhaseSucceeded, Kind: apiv1.NodeKindCommand, StartedAt: at(1), FinishedAt: at(2), Attempts: attempt("prepare", 1, 2)},
				{Name: "train", Phase: apiv1.PhaseSucceeded, Kind: apiv1.NodeKindCommand, StartedAt: at(2), FinishedAt: at(9), Outputs: map[string]string{"loss": "0.031"}, Attempts: attempt("train", 2, 9)},
			},
			Progress: &apiv1.RunProgress{Total: 2, Done: 2, Succeeded: 2},
		},
	}
}

func exampleApproval() apiv1.Approval {
	yes := true
	return apiv1.Approval{Approve: &yes, Reason: "the metrics look right"}
}

func exampleSignal() apiv1.Signal {
	v := "0.01"
	return apiv1.Signal{Value: &v, Reason: "the learning rate to use"}
}
