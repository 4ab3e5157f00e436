package training

import (
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// EnforcePodGroupPolicy is the pod-group policy of Kubeflow Trainer v2's
// runtime framework: the runtime's gangPolicy, not the backend, decides
// whether an attempt's gang gets a PodGroup and for which gang scheduler,
// how many of its hosts must be placed together and how long the
// scheduler may hold part of it. It fills in spec.Container.PodGroup,
// which a container backend realises; a runtime that names no scheduler
// leaves the field nil and the backend's own gangScheduler applies.
func EnforcePodGroupPolicy(j *Job, spec *job.Spec) {
	g := j.Runtime.GangPolicy
	if g == nil || g.Scheduler == "" {
		return
	}
	spec.Container.PodGroup = &job.PodGroup{Kind: g.Scheduler, MinMember: minMember(j, spec), ScheduleTimeout: podGroupTimeout(g)}
}

// minMember is how many hosts the scheduler must place together: an
// elastic job's minimum, else every host of the attempt.
func minMember(j *Job, spec *job.Spec) int {
	if j.Elastic != nil && spec.MinHosts > 0 {
		return spec.MinHosts
	}
	seen := map[int]bool{}
	for _, p := range spec.Processes {
		seen[p.Host] = true
	}
	return len(seen)
}

func podGroupTimeout(g *apiv1.GangPolicy) time.Duration {
	if g.ScheduleTimeoutSeconds == nil || *g.ScheduleTimeoutSeconds <= 0 {
		return 0
	}
	return min(time.Duration(*g.ScheduleTimeoutSeconds)*time.Second, MaxDuration)
}

// checkPodGroup adds a problem for a gang scheduler kiln cannot make a
// PodGroup for.
func (m *merger) checkPodGroup(g *apiv1.GangPolicy) {
	switch g.Scheduler {
	case "", apiv1.GangSchedulerCoscheduling, apiv1.GangSchedulerVolcano:
		return
	}
	m.add(apiv1.CodeInvalidValue, "gangPolicy.scheduler", "scheduler %q is not a gang scheduler kiln makes PodGroups for: use %s or %s",
		g.Scheduler, apiv1.GangSchedulerCoscheduling, apiv1.GangSchedulerVolcano)
}
