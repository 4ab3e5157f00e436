package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

var _ backend.RunRemover = (*Backend)(nil)

// RemoveRun implements backend.RunRemover: it deletes every object of the
// run that the clean policy left (pods with their logs, services, config
// maps, secrets, pod groups) and forgets its attempts. Nothing left is
// not an error.
func (b *Backend) RemoveRun(ctx context.Context, run string) error {
	sel := LabelManagedBy + "=" + managedBy + "," + LabelRun + "=" + dnsLabel(run, 63)
	for _, resource := range []string{"pods", "configmaps", "secrets"} {
		if err := b.core.deleteCollection(ctx, resource, metav1.DeleteOptions{}, sel); ignoreNotFound(err) != nil {
			return err
		}
	}
	var svcs corev1.ServiceList
	if err := b.core.list(ctx, "services", metav1.ListOptions{LabelSelector: sel}, &svcs); err != nil {
		return err
	}
	for _, s := range svcs.Items {
		if err := b.core.delete(ctx, "services", s.Name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
			return err
		}
	}
	if gvr, ok := podGroupResources[b.cfg.GangScheduler]; ok && b.cfg.GangScheduler != GangNone {
		err := b.dynamic.Resource(gvr).Namespace(b.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel})
		if ignoreNotFound(err) != nil {
			return err
		}
	}
	b.forgetRun(run)
	return nil
}

// forgetRun drops what the backend remembers of run's attempts.
func (b *Backend) forgetRun(run string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	dropRun(b.specs, run)
	dropRun(b.gone, run)
	dropRun(b.decided, run)
	dropRun(b.reported, run)
}

func dropRun[V any](m map[job.AttemptID]V, run string) {
	for id := range m {
		if id.Run == run {
			delete(m, id)
		}
	}
}
