package train_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/node/train"
)

// An XGBoostJob converted from the operator's: the Master runs the
// image's entrypoint with the trainer's args, the Workers their own args
// and env; a Worker's failure is judged by the Workers' own policy.
const operatorReplicas = `spec:
  tasks:
  - name: job
    train:
      runtime: xgb
      resolvedRuntime:
        mlPolicy:
          xgboost: {}
          trainingOperator:
            leader: Master
            replicas:
              Worker: {args: ["--role={{params.role}}"], env: [{name: OWN, value: "1"}], restartPolicy: ExitCode}
      numNodes: 3
      args: [--master]
      policy: {restartPolicy: Never}
  params: [{name: role, default: worker}]
`

func TestBuildRunsEachReplicaTypesOwnArgsAndEnv(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, operatorReplicas)
	h := train.New()
	spec := &job.Spec{}
	if err := h.Build(t.Context(), nodetest.Attempt(h, tk, 1, map[string]string{"role": "worker"}), spec); err != nil {
		t.Fatal(err)
	}
	type proc struct {
		Command, Args []string
		Own           bool
	}
	got := map[string]proc{}
	for _, p := range spec.Processes {
		got[p.Name] = proc{p.Command, p.Args, slices.Contains(p.Env, "OWN=1") && slices.ContainsFunc(p.Env, func(kv string) bool { return strings.HasPrefix(kv, "RANK=") })}
	}
	want := map[string]proc{
		"master-0": {nil, []string{"--master"}, false},
		"worker-0": {nil, []string{"--role=worker"}, true},
		"worker-1": {nil, []string{"--role=worker"}, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("processes (-want +got):\n%s", diff)
	}
}

func TestJudgeFollowsTheFailedReplicaTypesOwnPolicy(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, operatorReplicas)
	h := train.New()
	for _, tc := range []struct {
		failed    string
		exit      int
		permanent bool
		says      string
	}{
		{"worker-1", 130, false, ""},
		{"worker-1", 1, true, "for replica type Worker"},
		{"master-0", 130, true, "restartPolicy is Never for replica group node"},
	} {
		v := h.Judge(tk, &job.Status{State: job.StateExited, ExitCode: tc.exit, Failed: tc.failed})
		if v.Permanent != tc.permanent || tc.permanent && (v.Code != apiv1.CodeNotRestarted || !strings.Contains(v.Message, tc.says)) {
			t.Errorf("%s exit %d = %+v, want permanent %v saying %q", tc.failed, tc.exit, v, tc.permanent, tc.says)
		}
	}
}
