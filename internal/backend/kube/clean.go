package kube

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kiln.dev/kiln/internal/job"
)

// Release is told that the engine has recorded how an attempt ended: the
// backend forgets it and deletes what only a running attempt needs (its
// Service, PodGroup, Kueue Workload, files and status record). Its pods hold its logs: the
// clean policy says whether they go too, now or CleanTTL later.
func (b *Backend) Release(ctx context.Context, id job.AttemptID, succeeded bool) error {
	a := names(id)
	_, recorded := b.record(a)
	b.mu.Lock()
	spec := b.specs[id]
	delete(b.specs, id)
	delete(b.gone, id)
	delete(b.decided, id)
	delete(b.reported, id)
	delete(b.lost, id)
	delete(b.queues, id)
	delete(b.finished, id)
	b.mu.Unlock()
	if spec == nil || isGang(spec) || len(spec.Files) > 0 || len(spec.SecretEnv) > 0 || spec.Container.Queue != "" || recorded {
		if err := b.deleteAux(ctx, a); err != nil {
			return err
		}
	}
	if spec != nil && spec.Clean == job.CleanAll {
		return b.deleteAll(ctx, a) // the job's cleanPodPolicy All: finished pods too
	}
	if b.cfg.CleanPolicy == CleanNever || (b.cfg.CleanPolicy == CleanOnSuccess && !succeeded) {
		return nil
	}
	if b.cfg.CleanTTL <= 0 {
		return b.deleteAll(ctx, a)
	}
	due := time.Now().Add(b.cfg.CleanTTL).UTC().Format(time.RFC3339)
	patch := []byte(`{"metadata":{"annotations":{"` + AnnoDeleteAfter + `":"` + due + `"}}}`)
	for _, p := range b.podsOf(a) {
		if err := b.core.mergePatch(ctx, "pods", p.Name, patch); err != nil {
			return err
		}
	}
	return nil
}

// clean deletes the objects of attempts whose delete-after time has come.
// It runs every ten seconds, or every CleanTTL if that is shorter.
func (b *Backend) clean(ctx context.Context) {
	every := 10 * time.Second
	if ttl := b.cfg.CleanTTL; ttl > 0 && ttl < every {
		every = ttl
	}
	if time.Since(b.janitorAt) < every {
		return
	}
	b.janitorAt = time.Now()
	for _, o := range b.pods.GetStore().List() {
		p := o.(*corev1.Pod)
		due, err := time.Parse(time.RFC3339, p.Annotations[AnnoDeleteAfter])
		if err != nil || time.Now().Before(due) {
			continue
		}
		id, ok := attemptOf(p.Annotations)
		if !ok {
			continue
		}
		if err := b.deleteAll(ctx, names(id)); err != nil {
			b.cfg.Log.Warn("cleaning up a finished attempt", "attempt", p.Annotations[AnnoAttemptID], "err", err)
		}
	}
}

// deleteAll deletes every object of an attempt: pods, service, config
// maps (files and the status record) and pod group.
func (b *Backend) deleteAll(ctx context.Context, a attempt) error {
	if err := b.core.deleteCollection(ctx, "pods", metav1.DeleteOptions{}, LabelJob+"="+a.Base); err != nil {
		return err
	}
	return b.deleteAux(ctx, a)
}

// deleteAux deletes an attempt's objects other than its pods.
func (b *Backend) deleteAux(ctx context.Context, a attempt) error {
	return b.deleteSelected(ctx, LabelJob+"="+a.Base)
}

// deleteSelected deletes the objects other than pods that sel selects:
// config maps, secrets, services, pod groups and Kueue workloads. What is gone already is
// not an error.
func (b *Backend) deleteSelected(ctx context.Context, sel string) error {
	for _, resource := range []string{"configmaps", "secrets"} {
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
	if err := b.deletePodGroups(ctx, sel); err != nil {
		return err
	}
	return b.deleteWorkloads(ctx, sel)
}
