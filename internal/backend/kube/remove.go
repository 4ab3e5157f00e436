package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
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
	if err := b.refuseRunning(ctx, run, sel); err != nil {
		return err
	}
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

// refuseRunning is an error when an attempt of the run selected by sel
// has not ended: a pod of it runs (or waits to), is not being deleted,
// and no decision of its end was recorded. A pod a decided gang left to
// end on its own (cleanPodPolicy None) is removed with the rest.
func (b *Backend) refuseRunning(ctx context.Context, run, sel string) error {
	var pods corev1.PodList
	if err := b.core.list(ctx, "pods", metav1.ListOptions{LabelSelector: sel}, &pods); err != nil {
		return err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		id, ok := attemptOf(p.Annotations)
		if _, decided := b.record(names(id)); ok && !decided {
			return fmt.Errorf("attempt %s of run %s still runs (pod %s): the run's objects are kept until it ends", id, run, p.Name)
		}
	}
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
