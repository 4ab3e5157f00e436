package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kiln.dev/kiln/internal/job"
)

// vanished tells, for a static gang some of whose pods are missing, a
// launch that was interrupted before every pod was created (the engine
// relaunches and fills them in) from a gang that was whole and lost a pod
// while no kiln watched it (the attempt failed: KLN-6009, exactly as when
// the watch sees the deletion). It returns the name of a pod that
// vanished, or "" when the launch may simply be completed.
//
// The gang's headless Service tells the two apart, and it survives a
// restart because it lives in the cluster: Launch creates it last, only
// once every pod was created, so a Service that exists means every pod
// existed. The Service is read first and the missing pods second, both
// from the API server rather than the informer's cache (which may not
// have seen pods just created): a pod absent after its Service was seen
// was created and then deleted. Re-creating it would bring a rank into a
// static rendezvous that the other ranks already formed, or finished.
//
// An elastic gang (MinHosts) is left to relaunch: a node that joins again
// is what its rendezvous is made for, and Join creates pods after the
// Service. A single task has no Service and no rendezvous; it is
// relaunched as before.
func (b *Backend) vanished(ctx context.Context, spec *job.Spec, pods map[int]*corev1.Pod) (string, error) {
	if !isGang(spec) || spec.MinHosts > 0 {
		return "", nil
	}
	a := names(spec.ID)
	var svc corev1.Service
	err := b.core.get(ctx, "services", a.Base, &svc)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil // the launch never finished
	case err != nil:
		return "", fmt.Errorf("reading service %s: %w", a.Base, err)
	case svc.Annotations[AnnoAttemptID] != spec.ID.String():
		return "", nil // not this attempt's: Launch will report the clash
	}
	for _, h := range hosts(spec) {
		if pods[h] != nil {
			continue
		}
		name := a.podName(h, true)
		var p corev1.Pod
		err := b.core.get(ctx, "pods", name, &p)
		switch {
		case apierrors.IsNotFound(err):
			return name, nil
		case err != nil:
			return "", fmt.Errorf("reading pod %s: %w", name, err)
		case p.DeletionTimestamp != nil && !terminal(&p):
			return name, nil // being deleted, not by kiln: no record says so
		}
	}
	return "", nil
}

// adoptLost marks the attempt lost when vanished finds a pod of its
// whole gang deleted, so that settle decides it as the watch would have.
func (b *Backend) adoptLost(ctx context.Context, spec *job.Spec) (bool, error) {
	name, err := b.vanished(ctx, spec, b.podsOf(names(spec.ID)))
	if err != nil || name == "" {
		return false, err
	}
	b.mu.Lock()
	if b.gone[spec.ID] == "" {
		b.gone[spec.ID] = name
	}
	b.mu.Unlock()
	return true, nil
}
