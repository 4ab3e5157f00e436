package train_test

import (
	"slices"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node/nodetest"
	"kiln.dev/kiln/internal/node/train"
)

func TestJudgeFollowsTheRestartPolicyOfTheFailedGroup(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, `spec:
  tasks:
  - name: job
    train:
      runtime: tensorflow
      resolvedRuntime: {mlPolicy: {tensorflow: {numPS: 1}}}
      numNodes: 2
      command: [x]
      policy: {restartPolicy: ExitCode, groups: {ps: {restartPolicy: Never}}}
`)
	h := train.New()
	for _, tc := range []struct {
		failed    string
		exit      int
		signal    string
		system    bool // the machine killed it (SIGKILL from outside kiln: an OOM kill)
		permanent bool
	}{
		{"worker-0", 3, "", false, true},
		{"worker-0", 137, "", false, false},
		{"chief-0", -1, "SIGTERM", false, false},
		{"ps-0", 137, "", false, true},
		{"ps-0", -1, "SIGKILL", true, true}, // Never means never, whoever killed it
		{"worker-0", -1, "SIGKILL", true, false},
	} {
		v := h.Judge(tk, &job.Status{State: job.StateExited, ExitCode: tc.exit, Signal: tc.signal, Failed: tc.failed, System: tc.system})
		if v.Permanent != tc.permanent || v.System != tc.system {
			t.Errorf("%s exit %d %s = %+v, want permanent %v, system %v", tc.failed, tc.exit, tc.signal, v, tc.permanent, tc.system)
		}
		if tc.permanent && (v.Code != apiv1.CodeNotRestarted || !strings.Contains(v.Message, "not restarted")) {
			t.Errorf("%s exit %d = %+v, want KLN-3026 saying why", tc.failed, tc.exit, v)
		}
		if tc.signal != "" && !strings.Contains(v.Message, tc.signal) {
			t.Errorf("%s killed by %s = %q, want the signal named", tc.failed, tc.signal, v.Message)
		}
	}
}

func TestBuildSetsGroupsCleanPolicyAndInitializerDirs(t *testing.T) {
	t.Parallel()
	tk := nodetest.Compile(t, `spec:
  tasks:
  - name: job
    dependsOn: [dataset-initializer]
    train:
      runtime: plain
      numNodes: 2
      command: [x]
      policy: {cleanPodPolicy: None}
      initializers: [dataset]
  - {name: dataset-initializer, initialize: {name: dataset, storageUri: d}, outputs: {artifacts: [{name: dataset, path: dataset}]}}
`)
	h := train.New()
	spec := &job.Spec{}
	a := nodetest.Attempt(h, tk, 1, nil)
	if err := h.Build(t.Context(), a, spec); err != nil {
		t.Fatal(err)
	}
	if spec.Clean != job.CleanNone {
		t.Errorf("clean = %q, want None", spec.Clean)
	}
	for _, p := range spec.Processes {
		if p.Group != "node" {
			t.Errorf("process %s is in group %q, want node", p.Name, p.Group)
		}
		if !slices.Contains(p.Env, "KILN_DATASET_DIR=<tasks.dataset-initializer.outputs.artifacts.dataset>") {
			t.Errorf("process %s env %q does not point KILN_DATASET_DIR at the initializer's artifact", p.Name, p.Env)
		}
	}
	if spec.Workspace == nil || spec.Workspace.Dirs["KILN_DATASET_DIR"] != "dataset" {
		t.Errorf("workspace = %+v, want KILN_DATASET_DIR at dataset", spec.Workspace)
	}
}
