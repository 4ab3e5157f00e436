package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

var _ backend.RunRemover = (*Backend)(nil)

// RemoveRun implements backend.RunRemover: it deletes every object of the
// run that the clean policy left (pods with their logs, services, config
// maps, secrets, pod groups, Kueue workloads) and forgets its attempts. Nothing left is
// not an error.
func (b *Backend) RemoveRun(ctx context.Context, run string) error {
	sel := LabelManagedBy + "=" + managedBy + "," + LabelRun + "=" + dnsLabel(run, 63)
	if err := b.core.deleteCollection(ctx, "pods", metav1.DeleteOptions{}, sel); ignoreNotFound(err) != nil {
		return err
	}
	if err := b.deleteSelected(ctx, sel); err != nil {
		return err
	}
	// The workspace claim a training job's initializers filled.
	if err := b.core.deleteCollection(ctx, "persistentvolumeclaims", metav1.DeleteOptions{}, sel); ignoreNotFound(err) != nil {
		return err
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
	dropRun(b.finished, run)
}

func dropRun[V any](m map[job.AttemptID]V, run string) {
	for id := range m {
		if id.Run == run {
			delete(m, id)
		}
	}
}
