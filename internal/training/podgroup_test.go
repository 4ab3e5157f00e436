package training

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

func TestEnforcePodGroupPolicy(t *testing.T) {
	t.Parallel()
	plain := func(g *apiv1.GangPolicy) *apiv1.TrainingRuntimeSpec {
		return &apiv1.TrainingRuntimeSpec{MLPolicy: &apiv1.MLPolicy{Plain: &apiv1.PlainPolicy{}}, GangPolicy: g}
	}
	cases := map[string]struct {
		runtime *apiv1.TrainingRuntimeSpec
		want    *job.PodGroup
	}{
		"a runtime that names no scheduler leaves it to the backend": {plain(nil), nil},
		"a timeout alone leaves it to the backend too":               {plain(&apiv1.GangPolicy{ScheduleTimeoutSeconds: i32(30)}), nil},
		"coscheduling with its timeout": {
			plain(&apiv1.GangPolicy{Scheduler: "coscheduling", ScheduleTimeoutSeconds: i32(30)}),
			&job.PodGroup{Kind: job.PodGroupCoscheduling, MinMember: 3, ScheduleTimeout: 30 * time.Second},
		},
		"volcano": {plain(&apiv1.GangPolicy{Scheduler: "volcano"}), &job.PodGroup{Kind: job.PodGroupVolcano, MinMember: 3}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			task := apiv1.TrainTask{Runtime: "rt", ResolvedRuntime: tc.runtime, Trainer: apiv1.Trainer{NumNodes: i32(3), Command: []string{"x"}}}
			j, problems := Merge(&task, NewRuntimes())
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			in := &Input{Command: []string{"x"}, Network: job.Network{Hosts: []string{"h0", "h1", "h2"}, Ports: []int{1}}}
			spec := &job.Spec{}
			if err := j.Plugin.Build(j, in, spec); err != nil {
				t.Fatal(err)
			}
			EnforcePodGroupPolicy(j, spec)
			if diff := cmp.Diff(tc.want, spec.Container.PodGroup); diff != "" {
				t.Errorf("PodGroup (-want +got):\n%s", diff)
			}
		})
	}
}

func TestElasticPodGroupNeedsItsMinimumOnly(t *testing.T) {
	t.Parallel()
	j := &Job{Runtime: &apiv1.TrainingRuntimeSpec{GangPolicy: &apiv1.GangPolicy{Scheduler: "volcano"}}, Elastic: &Elastic{MinNodes: 2, MaxNodes: 4}}
	spec := &job.Spec{MinHosts: 2, Processes: []job.Process{{Host: 0}, {Host: 1}, {Host: 2}, {Host: 3}}}
	EnforcePodGroupPolicy(j, spec)
	if pg := spec.Container.PodGroup; pg == nil || pg.MinMember != 2 {
		t.Errorf("PodGroup %+v, want minMember 2 (the elastic minimum)", pg)
	}
}

func TestUnknownGangSchedulerIsRefused(t *testing.T) {
	t.Parallel()
	rt := &apiv1.TrainingRuntimeSpec{MLPolicy: &apiv1.MLPolicy{Plain: &apiv1.PlainPolicy{}}, GangPolicy: &apiv1.GangPolicy{Scheduler: "kueue"}}
	problems := CheckRuntime(rt)
	if len(problems) != 1 || problems[0].Code != apiv1.CodeInvalidValue || problems[0].Field != "gangPolicy.scheduler" ||
		!strings.Contains(problems[0].Msg, `"kueue"`) {
		t.Errorf("problems %+v, want %s at gangPolicy.scheduler naming kueue", problems, apiv1.CodeInvalidValue)
	}
}
