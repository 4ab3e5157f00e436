package kube

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kiln.dev/kiln/internal/job"
)

// gangPlan is how an attempt's gang is scheduled: the gang scheduler whose
// PodGroup it gets (GangNone: none), how many of its pods must be placed
// together, how long the scheduler holds part of it, and the scheduler
// its pods name.
type gangPlan struct {
	Kind          string
	MinMember     int
	Timeout       time.Duration
	SchedulerName string
}

// planGang realises what the spec's pod-group policy says (the training
// runtime's), else the backend's own gangScheduler setting.
func planGang(spec *job.Spec, sh shape) gangPlan {
	p := gangPlan{Kind: sh.GangScheduler, MinMember: minMember(spec), Timeout: spec.Container.ScheduleTimeout, SchedulerName: sh.SchedulerName}
	pg := spec.Container.PodGroup
	if pg == nil {
		return p
	}
	if pg.Kind != p.Kind {
		p.Kind, p.SchedulerName = pg.Kind, defaultSchedulerName(pg.Kind)
	}
	if pg.MinMember > 0 {
		p.MinMember = pg.MinMember
	}
	if pg.ScheduleTimeout > 0 {
		p.Timeout = pg.ScheduleTimeout
	}
	return p
}

// defaultSchedulerName is the name the gang scheduler of kind serves
// (the scheduler-plugins and Volcano manifests' own).
func defaultSchedulerName(kind string) string {
	switch kind {
	case GangCoscheduling:
		return "scheduler-plugins-scheduler"
	case GangVolcano:
		return "volcano"
	}
	return ""
}

// podGroupGVR is the resource of a PodGroup object kiln built.
func podGroupGVR(u *unstructured.Unstructured) schema.GroupVersionResource {
	return u.GroupVersionKind().GroupVersion().WithResource("podgroups")
}

// deletePodGroups deletes the selected PodGroups of every gang scheduler:
// a runtime's pod-group policy may have picked another than the
// backend's. Only the backend's own kind must be served and allowed; the
// others may be missing from the cluster or from kiln's role.
func (b *Backend) deletePodGroups(ctx context.Context, sel string) error {
	for kind, gvr := range podGroupResources {
		err := b.dynamic.Resource(gvr).Namespace(b.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel})
		switch {
		case ignoreNotFound(err) == nil:
		case kind != b.cfg.GangScheduler && (apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err)):
		default:
			return err
		}
	}
	return nil
}
