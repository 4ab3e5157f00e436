package workflow

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// xgbEntrypoint is an XGBoostJob in the shape of training-operator's own
// xgboostjob.yaml: no command (the image's entrypoint), a Master and
// Workers of different args and restart policies.
const xgbEntrypoint = `apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata: {name: xgb}
spec:
  xgbReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
          - {name: xgboost, image: 'xgb:1', args: [--job_type=Train, --model_path=/tmp/m]}
    Worker:
      replicas: 2
      restartPolicy: ExitCode
      template:
        spec:
          containers:
          - {name: xgboost, image: 'xgb:1', args: [--job_type=Train]}
`

func TestReplicaTypesKeepTheirOwnArgsAndRestartPolicy(t *testing.T) {
	t.Parallel()
	rt, tj, _ := converted(t, xgbEntrypoint)
	if tr := tj.Spec.Trainer; len(tr.Command) != 0 || !cmp.Equal(tr.Args, []string{"--job_type=Train", "--model_path=/tmp/m"}) {
		t.Errorf("trainer command %q args %q, want the Master's args and no command", tr.Command, tr.Args)
	}
	want := map[string]apiv1.OperatorReplica{"Worker": {Args: []string{"--job_type=Train"}, RestartPolicy: apiv1.RestartPolicyExitCode}}
	if diff := cmp.Diff(want, rt.Spec.MLPolicy.TrainingOperator.Replicas); diff != "" {
		t.Errorf("replicas (-want +got):\n%s", diff)
	}
	if p := tj.Spec.RunPolicy; p == nil || p.RestartPolicy != apiv1.RestartPolicyNever {
		t.Errorf("run policy %+v, want the Master's restartPolicy Never for the nodes", p)
	}
	checked, errs := compileFiles(t, xgbEntrypoint)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	j := checked[0].Plan.Tasks[0].Train
	for process, want := range map[string]apiv1.RestartPolicy{"master-0": apiv1.RestartPolicyNever, "worker-1": apiv1.RestartPolicyExitCode} {
		if got, _ := j.RestartPolicyOf(process); got != want {
			t.Errorf("process %s restarts %s, want %s", process, got, want)
		}
	}
}

// An entrypoint-only job compiles for every backend; the local one
// refuses it before it runs, naming the container's command as written,
// and the kubernetes one takes it.
func TestEntrypointOnlyJobsAreRefusedLocallyAsWritten(t *testing.T) {
	t.Parallel()
	checked, errs := compileFiles(t, xgbEntrypoint)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := checked[0]
	err := RequireCommands(c.Doc, c.Plan)
	got := problems(t, apiv1.Errors(err), "wf.yaml", "XGBoostJob/xgb")
	want := []problem{
		{apiv1.CodeRequired, "spec.xgbReplicaSpecs.Master.template.spec.containers[0].command"},
		{apiv1.CodeRequired, "spec.xgbReplicaSpecs.Worker.template.spec.containers[0].command"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("local problems (-want +got):\n%s\n%v", diff, err)
	}
	if e := apiv1.Errors(err); len(e) == 0 || !strings.Contains(e[0].Hint, "write spec.xgbReplicaSpecs.Master.template.spec.containers[0].command: the program the image's ENTRYPOINT runs") {
		t.Errorf("hint %q does not say what to add where", e[0].Hint)
	}
	if err := RequireImages(c.Doc, c.Plan); err != nil {
		t.Errorf("the kubernetes backend refuses the entrypoint: %v", err)
	}
	withCmd := strings.Replace(xgbEntrypoint, "args: [--job_type=Train, --model_path=/tmp/m]", "command: [python3, main.py], args: [--job_type=Train]", 1)
	checked, errs = compileFiles(t, withCmd)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c = checked[0]
	got = problems(t, apiv1.Errors(RequireCommands(c.Doc, c.Plan)), "wf.yaml", "XGBoostJob/xgb")
	if diff := cmp.Diff([]problem{{apiv1.CodeRequired, "spec.xgbReplicaSpecs.Worker.template.spec.containers[0].command"}}, got); diff != "" {
		t.Errorf("a Worker of args alone beside a Master's command, local problems (-want +got):\n%s", diff)
	}
}

func TestPaddleJobRunsInCollectiveMode(t *testing.T) {
	t.Parallel()
	rt, tj, ignored := converted(t, "apiVersion: kubeflow.org/v1\nkind: PaddleJob\nmetadata: {name: pd}\nspec:\n  paddleReplicaSpecs:\n"+
		replicaYAML("Worker", 2, "{name: paddle, image: 'paddle:2', command: [python], args: [-m, paddle.distributed.launch, run_check], ports: [{name: master, containerPort: 37777}]}"))
	p := rt.Spec.MLPolicy
	if p.Paddle == nil || p.TrainingOperator == nil || *tj.Spec.Trainer.NumNodes != 2 {
		t.Errorf("policy %+v nodes %d, want paddle with the operator's environment on 2 nodes", p, *tj.Spec.Trainer.NumNodes)
	}
	if pol := tj.Spec.RunPolicy; pol == nil || pol.RestartPolicy != apiv1.RestartPolicyOnFailure {
		t.Errorf("run policy %+v, want the operator's default OnFailure", pol)
	}
	var ports bool
	for _, i := range ignored {
		ports = ports || i.Field == "spec.paddleReplicaSpecs.Worker.template.spec.containers[0].ports"
	}
	if !ports {
		t.Errorf("the master port is not among the ignored fields %v", ignored)
	}
}

// A task that runs its image's entrypoint cannot have outputs, which
// kiln collects by wrapping the command: the kubernetes backend refuses
// it before it runs.
func TestEntrypointWithOutputsIsRefusedForKubernetes(t *testing.T) {
	t.Parallel()
	checked, errs := compileFiles(t, workflowDoc("wf", `spec:
  image: 'img:1'
  tasks:
  - name: fit
    train: {runtime: plain, numNodes: 1, args: [--epochs, "1"]}
    outputs: {parameters: [{name: loss}]}
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	c := checked[0]
	got := problems(t, apiv1.Errors(RequireImages(c.Doc, c.Plan)), "wf.yaml", "Workflow/wf")
	if diff := cmp.Diff([]problem{{apiv1.CodeEntrypointWrapped, "spec.tasks[0].train.command"}}, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	got = problems(t, apiv1.Errors(RequireCommands(c.Doc, c.Plan)), "wf.yaml", "Workflow/wf")
	if diff := cmp.Diff([]problem{{apiv1.CodeRequired, "spec.tasks[0].train.command"}}, got); diff != "" {
		t.Errorf("local problems (-want +got):\n%s", diff)
	}
}
