package kube

import (
	"testing"
	"time"

	"kiln.dev/kiln/internal/job"
)

// The runtime's pod-group policy, carried by the spec, decides the
// PodGroup; the backend's gangScheduler applies when it says nothing.
func TestBuildRealisesTheSpecsPodGroup(t *testing.T) {
	cases := map[string]struct {
		backend   string
		pg        *job.PodGroup
		apiVer    string // "" for no PodGroup
		scheduler string
		min       int64
		timeout   int64
	}{
		"the backend's default":      {backend: GangCoscheduling, apiVer: "scheduling.x-k8s.io/v1alpha1", scheduler: "scheduler-plugins-scheduler", min: 3},
		"no gang scheduler anywhere": {},
		"the runtime picks volcano over the backend's": {
			backend: GangCoscheduling, pg: &job.PodGroup{Kind: job.PodGroupVolcano, MinMember: 3},
			apiVer: "scheduling.volcano.sh/v1beta1", scheduler: "volcano", min: 3,
		},
		"the runtime asks for coscheduling on a backend without one": {
			pg:     &job.PodGroup{Kind: job.PodGroupCoscheduling, MinMember: 2, ScheduleTimeout: 30 * time.Second},
			apiVer: "scheduling.x-k8s.io/v1alpha1", scheduler: "scheduler-plugins-scheduler", min: 2, timeout: 30,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := gangSpec(3, "")
			spec.Container.PodGroup = tc.pg
			cfg := withDefaults(Config{GangScheduler: tc.backend})
			objs, err := build(spec, shape{Namespace: "ns", GangScheduler: cfg.GangScheduler, SchedulerName: cfg.SchedulerName})
			if err != nil {
				t.Fatal(err)
			}
			if tc.apiVer == "" {
				if objs.PodGroup != nil {
					t.Fatalf("a PodGroup %v, want none", objs.PodGroup.Object)
				}
				return
			}
			if objs.PodGroup == nil || objs.PodGroup.GetAPIVersion() != tc.apiVer {
				t.Fatalf("PodGroup %v, want %s", objs.PodGroup, tc.apiVer)
			}
			min, _, _ := unstructuredInt(objs.PodGroup.Object, "spec", "minMember")
			timeout, _, _ := unstructuredInt(objs.PodGroup.Object, "spec", "scheduleTimeoutSeconds")
			if min != tc.min || timeout != tc.timeout {
				t.Errorf("minMember %d scheduleTimeoutSeconds %d, want %d and %d", min, timeout, tc.min, tc.timeout)
			}
			if gvr := podGroupGVR(objs.PodGroup); gvr.Resource != "podgroups" || gvr.GroupVersion().String() != tc.apiVer {
				t.Errorf("PodGroup resource %v", gvr)
			}
			for _, p := range objs.Pods {
				named := p.Labels["scheduling.x-k8s.io/pod-group"] + p.Annotations["scheduling.k8s.io/group-name"]
				if p.Spec.SchedulerName != tc.scheduler || named != names(spec.ID).Base {
					t.Errorf("pod %s: scheduler %q, group %q; want %q, %q", p.Name, p.Spec.SchedulerName, named, tc.scheduler, names(spec.ID).Base)
				}
			}
		})
	}
}
