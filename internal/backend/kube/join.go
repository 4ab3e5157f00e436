package kube

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

var _ backend.Joiner = (*Backend)(nil)

// Join implements backend.Joiner: it creates the pod of host, a node that
// joins an elastic gang, and judges the gang by spec, which has it, from
// then on. A gang that ended is left alone.
func (b *Backend) Join(ctx context.Context, spec *job.Spec, host int) error {
	b.mu.Lock()
	b.specs[spec.ID] = spec
	b.mu.Unlock()
	if _, ok := b.record(names(spec.ID)); ok {
		return nil
	}
	objs, err := build(spec, b.shape)
	if err != nil {
		return err
	}
	var pods []*corev1.Pod
	for k, h := range hosts(spec) {
		if h == host {
			pods = append(pods, objs.Pods[k])
		}
	}
	return b.createPods(ctx, pods)
}

// minMember is how many of a gang's pods a gang scheduler must place
// together: an elastic gang's minimum, else every pod.
func minMember(spec *job.Spec) int {
	if spec.MinHosts > 0 {
		return spec.MinHosts
	}
	return len(hosts(spec))
}
