package workflow

import (
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A Trainer runtime's podGroupPolicy picks the gang scheduler whose
// PodGroup the job's attempts get (internal/training's pod-group policy).
func TestTrainerPodGroupPolicyPicksTheGangScheduler(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		policy, scheduler string
		timeout           int32
	}{
		"coscheduling": {"podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 30}}", apiv1.GangSchedulerCoscheduling, 30},
		"volcano":      {"podGroupPolicy: {volcano: {}}", apiv1.GangSchedulerVolcano, 0},
		"none":         {"", "", 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := strings.Replace(trainerRuntime, "podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 30}}", tc.policy, 1)
			checked, errs := compileFiles(t, doc)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			g := checked[0].Plan.Tasks[0].Train.Runtime.GangPolicy
			var got string
			var timeout int32
			if g != nil {
				got = g.Scheduler
				if g.ScheduleTimeoutSeconds != nil {
					timeout = *g.ScheduleTimeoutSeconds
				}
			}
			if got != tc.scheduler || timeout != tc.timeout {
				t.Errorf("gangPolicy %+v, want scheduler %q and timeout %d", g, tc.scheduler, tc.timeout)
			}
		})
	}
}
