package train_test

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/node/train"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	for name, rt := range map[string]string{
		"torch":      "torch-distributed",
		"mpi":        "mpi",
		"xgboost":    "xgboost",
		"tensorflow": "tensorflow",
		"jax":        "jax",
		"plain":      "plain",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tk := nodetest.Compile(t, "spec:\n  tasks:\n  - name: job\n    train: {runtime: "+rt+", numNodes: 2, command: [python3, t.py]}\n")
			nodetest.Run(t, train.New(), tk)
		})
	}
}

func TestJudgeNamesTheRankAndHonoursRetryableCodes(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, `spec:
  tasks:
  - name: job
    train:
      runtime: strict
      resolvedRuntime: {mlPolicy: {plain: {}}, failurePolicy: {retryableExitCodes: [75]}}
      numNodes: 2
      command: [x]
`)
	h := train.New()
	v := h.Judge(tk, &job.Status{State: job.StateExited, ExitCode: 3, Failed: "node-1"})
	if !v.Permanent || !strings.Contains(v.Message, "process node-1") || !strings.Contains(v.Message, "not retryable") {
		t.Errorf("exit 3 = %+v, want a permanent failure naming node-1", v)
	}
	if v := h.Judge(tk, &job.Status{State: job.StateExited, ExitCode: 75, Failed: "node-0"}); v.Permanent {
		t.Errorf("exit 75 = %+v, want it retryable", v)
	}
}

func TestReportMovesConditionsAndCountsReplicas(t *testing.T) {
	t.Parallel()
	var ns apiv1.NodeStatus
	h := train.New()
	spec := &job.Spec{Processes: []job.Process{{Name: "node-0-0"}, {Name: "node-1-0"}}}
	h.Report(&ns, node.Change{Phase: apiv1.PhaseRunning, Reason: "Started", Started: spec})
	if len(ns.Replicas) != 1 || ns.Replicas[0].Active != 2 {
		t.Errorf("replicas = %+v, want 2 active in group node", ns.Replicas)
	}
	h.Report(&ns, node.Change{Ended: &job.Status{
		Processes:        map[string]int{"node-0-0": 0, "node-1-0": 1, "node-2-0": -1},
		StoppedProcesses: []string{"node-2-0"},
	}})
	h.Report(&ns, node.Change{Phase: apiv1.PhaseFailed, Reason: "Failed"})
	got := map[string]string{}
	for _, c := range ns.Conditions {
		got[c.Type] = c.Status
	}
	want := apiv1.ReplicaGroupStatus{Name: "node", Succeeded: 1, Failed: 1, Stopped: 1}
	if got[apiv1.ConditionCreated] != "True" || got[apiv1.ConditionRunning] != "False" || got[apiv1.ConditionFailed] != "True" ||
		ns.Replicas[0] != want {
		t.Errorf("conditions %v, replicas %+v; want replicas %+v", got, ns.Replicas, want)
	}
}
