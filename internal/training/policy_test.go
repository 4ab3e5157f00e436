package training

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

func TestExitCodeRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy apiv1.RestartPolicy
		exit   int
		signal string
		want   bool
	}{
		{apiv1.RestartPolicyExitCode, 1, "", false},
		{apiv1.RestartPolicyExitCode, 3, "", false},
		{apiv1.RestartPolicyExitCode, 127, "", false},
		{apiv1.RestartPolicyExitCode, 128, "", true},
		{apiv1.RestartPolicyExitCode, 130, "", true},
		{apiv1.RestartPolicyExitCode, 137, "", true},
		{apiv1.RestartPolicyExitCode, 255, "", true},
		{apiv1.RestartPolicyExitCode, -1, "SIGKILL", true},
		{apiv1.RestartPolicyNever, 137, "", false},
		{apiv1.RestartPolicyNever, -1, "SIGTERM", false},
		{apiv1.RestartPolicyOnFailure, 3, "", true},
		{apiv1.RestartPolicyAlways, 3, "", true},
		{"", 3, "", true},
	} {
		ok, why := Restartable(tc.policy, tc.exit, tc.signal)
		if ok != tc.want || (!ok && why == "") {
			t.Errorf("Restartable(%q, %d, %q) = %v %q, want %v (with a reason when not)", tc.policy, tc.exit, tc.signal, ok, why, tc.want)
		}
	}
}

func merged(t *testing.T, runtime string, p *apiv1.JobPolicy) (*Job, []Problem) {
	t.Helper()
	return Merge(&apiv1.TrainTask{Runtime: runtime, Trainer: apiv1.Trainer{Command: []string{"x"}, NumNodes: i32(2)}, Policy: p}, NewRuntimes())
}

func TestPolicySelectionByGroup(t *testing.T) {
	t.Parallel()
	j, problems := merged(t, "mpi", &apiv1.JobPolicy{
		RestartPolicy: apiv1.RestartPolicyExitCode, CleanPodPolicy: apiv1.CleanPodPolicyNone,
		Groups: map[string]apiv1.GroupPolicy{"launcher": {RestartPolicy: apiv1.RestartPolicyNever}},
	})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if got := j.RestartPolicy(GroupLauncher); got != apiv1.RestartPolicyNever {
		t.Errorf("launcher = %s, want its override Never", got)
	}
	if got := j.RestartPolicy(GroupNode); got != apiv1.RestartPolicyExitCode {
		t.Errorf("node = %s, want the job's ExitCode", got)
	}
	if j.Clean() != job.CleanNone {
		t.Errorf("clean = %q, want None", j.Clean())
	}
	d, _ := merged(t, "plain", nil)
	if d.RestartPolicy(GroupNode) != apiv1.RestartPolicyOnFailure || d.Clean() != job.CleanRunning {
		t.Errorf("defaults = %s, %q; want OnFailure and Running", d.RestartPolicy(GroupNode), d.Clean())
	}
	for name, want := range map[string]string{"node-1-0": GroupNode, "launcher": GroupLauncher, "chief-0": GroupNode, "worker-3": GroupNode, "ps-1": GroupPS, "": GroupNode} {
		if got := GroupOf(name); got != want {
			t.Errorf("GroupOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestBadPoliciesAreNamed(t *testing.T) {
	t.Parallel()
	_, problems := merged(t, "mpi", &apiv1.JobPolicy{
		CleanPodPolicy: "Some", RestartPolicy: "Sometimes",
		Groups: map[string]apiv1.GroupPolicy{"node": {RestartPolicy: apiv1.RestartPolicyNever}, "launcher": {RestartPolicy: "Twice"}},
	})
	got := map[string]apiv1.Code{}
	for _, p := range problems {
		got[p.Field] = p.Code
	}
	want := map[string]apiv1.Code{
		"policy.cleanPodPolicy": apiv1.CodeRunPolicyValue, "policy.restartPolicy": apiv1.CodeRunPolicyValue,
		"policy.groups.node": apiv1.CodeReplicaGroup, "policy.groups.launcher.restartPolicy": apiv1.CodeRunPolicyValue,
	}
	for f, c := range want {
		if got[f] != c {
			t.Errorf("problem at %s = %q, want %s (all: %v)", f, got[f], c, problems)
		}
	}
	for _, p := range problems {
		if p.Field == "policy.groups.node" && !strings.Contains(p.Msg, "launcher") {
			t.Errorf("the unknown group's message %q does not list the groups the job has", p.Msg)
		}
	}
}

func TestGroupsAreSetOnProcesses(t *testing.T) {
	t.Parallel()
	spec := build(t, "tensorflow", apiv1.TrainTask{})
	spec.Processes = append(spec.Processes, job.Process{Name: "ps-0"})
	SetGroups(spec)
	for _, p := range spec.Processes {
		if p.Group != GroupOf(p.Name) || p.Group == "" {
			t.Errorf("process %s has group %q", p.Name, p.Group)
		}
	}
}
