package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// CreateWorkers bounds the pods of one gang created at once.
const CreateWorkers = 16

// Launch creates the attempt's objects, each only if it does not exist
// yet: a launch repeated after a crash finds the pods it made before.
// What pods need at creation (files, PodGroup) comes first; the Service
// comes last, so the cluster computes its endpoints once for the whole
// gang rather than again for each pod as it is created. Ranks retry their
// rendezvous until the names resolve, a few milliseconds later. The
// Service coming last is also how a restarted engine knows that a gang
// missing a pod was whole once (see vanished): keep it last. An object the
// API server refuses for good (see refused) ends the launch with a
// *job.RefusedError, after deleting what the attempt made before it.
func (b *Backend) Launch(ctx context.Context, spec *job.Spec) error {
	err := b.launch(ctx, spec)
	if !refused(err) {
		return err
	}
	if derr := b.deleteAll(ctx, names(spec.ID)); derr != nil {
		b.cfg.Log.Warn("deleting the objects of a refused attempt", "attempt", spec.ID, "err", derr)
	}
	return &job.RefusedError{
		Code:    string(apiv1.CodeLaunchRefused),
		Message: "the Kubernetes API server refused the attempt: " + err.Error(),
	}
}

// launch creates the attempt's objects (see Launch).
func (b *Backend) launch(ctx context.Context, spec *job.Spec) error {
	spec = mpiGang(spec, b.ns)
	b.remember(spec)
	a := names(spec.ID)
	if _, ok := b.record(a); ok {
		return nil
	}
	objs, err := build(spec, b.shape)
	if err != nil {
		return err
	}
	if err := b.stopEarlier(ctx, spec); err != nil {
		return err
	}
	if err := b.createWorkspace(ctx, spec, objs.Pods); err != nil {
		return err
	}
	if objs.Secret != nil {
		if err := b.core.create(ctx, "secrets", objs.Secret); ignoreExists(err) != nil {
			return fmt.Errorf("creating secret %s: %w", objs.Secret.Name, err)
		}
	}
	if err := b.createSSHSecret(ctx, spec); err != nil {
		return err
	}
	if objs.Files != nil {
		if err := b.core.create(ctx, "configmaps", objs.Files); ignoreExists(err) != nil {
			return fmt.Errorf("creating config map %s: %w", objs.Files.Name, err)
		}
	}
	for _, p := range objs.Pods {
		p.Labels = withoutQueueLabel(p.Labels)
	}
	if spec.Container.Queue != "" {
		// Created suspended: the pods come once Kueue admits the
		// Workload (kueueGate, from Observe and Watch).
		if ok, err := b.admitted(ctx, spec, objs.Pods); err != nil || !ok {
			return err
		}
	}
	if objs.PodGroup != nil {
		gvr := podGroupGVR(objs.PodGroup)
		if _, err := b.dynamic.Resource(gvr).Namespace(b.ns).Create(ctx, objs.PodGroup, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("creating pod group %s: %w", objs.PodGroup.GetName(), err)
		}
	}
	if err := b.createPods(ctx, objs.Pods); err != nil {
		return err
	}
	return b.createService(ctx, objs.Service)
}

// createService creates a gang's Service unless it exists (or svc is nil).
func (b *Backend) createService(ctx context.Context, svc *corev1.Service) error {
	if svc == nil {
		return nil
	}
	if err := b.core.create(ctx, "services", svc); ignoreExists(err) != nil {
		return fmt.Errorf("creating service %s: %w", svc.Name, err)
	}
	return nil
}

// createPods creates pods in parallel, keeping the first error.
func (b *Backend) createPods(ctx context.Context, pods []*corev1.Pod) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		sem   = make(chan struct{}, CreateWorkers)
	)
	for _, p := range pods {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			err := b.core.create(ctx, "pods", p)
			if err = ignoreExists(err); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("creating pod %s: %w", p.Name, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// refused reports whether err is the API server refusing an object in a
// way no retry can change: the object is invalid (422), or an admission
// check forbids it. A quota that is exceeded now may have room later, so
// that refusal is retried.
func refused(err error) bool {
	switch {
	case err == nil:
		return false
	case apierrors.IsInvalid(err):
		return true
	case apierrors.IsForbidden(err):
		return !strings.Contains(err.Error(), "exceeded quota")
	}
	return false
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Observe returns the attempt's status as its pods (or its record) show it,
// stopping what is left of a gang that is decided. An engine that adopts a
// running gang (after a crash between its pods and its Service) makes sure
// the Service exists; one that finds a pod of a whole gang gone fails the
// attempt (see vanished) rather than let the engine relaunch it.
func (b *Backend) Observe(ctx context.Context, spec *job.Spec) (job.Status, error) {
	spec = mpiGang(spec, b.ns)
	adopted := b.remember(spec)
	st, err := b.settle(ctx, spec)
	if err == nil && st.State == job.StateUnknown {
		var lost bool
		if lost, err = b.adoptLost(ctx, spec); lost {
			st, err = b.settle(ctx, spec)
		}
	}
	if err == nil && adopted && isGang(spec) && st.State == job.StateRunning && !kueueHeld(st) {
		err = b.createService(ctx, service(names(spec.ID), b.shape))
	}
	return st, err
}

// settle decides an attempt from its pods. When it is decided while some
// of its pods still run (a rank failed, a pod is stuck) it records the
// decision first and then deletes the pods, so the decision outlives them.
func (b *Backend) settle(ctx context.Context, spec *job.Spec) (job.Status, error) {
	a := names(spec.ID)
	if st, ok := b.record(a); ok {
		b.finishQueued(ctx, spec, st)
		return st, nil
	}
	if spec.Container.Queue != "" {
		if st, wait, err := b.kueueGate(ctx, spec); wait || err != nil {
			return st, err
		}
	}
	st, err := b.settlePods(ctx, spec, a)
	if err == nil {
		b.finishQueued(ctx, spec, st)
	}
	return st, err
}

// finishQueued marks the Kueue Workload of an attempt that ended finished.
func (b *Backend) finishQueued(ctx context.Context, spec *job.Spec, st job.Status) {
	if spec.Container.Queue != "" && st.State == job.StateExited {
		b.finishWorkload(ctx, spec, st)
	}
}

// settlePods decides an attempt from its pods (see settle).
func (b *Backend) settlePods(ctx context.Context, spec *job.Spec, a attempt) (job.Status, error) {
	pods := b.podsOf(a)
	st := decide(spec, pods, time.Now(), b.lim)
	b.mu.Lock()
	gone := b.gone[spec.ID]
	b.mu.Unlock()
	if st.State != job.StateExited && gone != "" {
		st = job.Status{
			State: job.StateExited, ExitCode: -1, Code: string(apiv1.CodePodLost),
			Message: fmt.Sprintf("pod %s was deleted while the attempt ran", gone),
		}
	}
	if st.State != job.StateExited || allEnded(pods) {
		return st, nil
	}
	st, err := b.writeRecord(ctx, a, st)
	if err != nil || spec.Clean == job.CleanNone {
		return st, err // None: the pods still running end on their own
	}
	return st, b.deleteUnended(ctx, pods)
}

// deleteUnended deletes the pods that have not ended; those that have
// stay, with their logs, for the clean policy to decide.
func (b *Backend) deleteUnended(ctx context.Context, pods map[int]*corev1.Pod) error {
	for _, p := range pods {
		if terminal(p) {
			continue
		}
		if err := b.core.delete(ctx, "pods", p.Name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
			return fmt.Errorf("stopping pod %s: %w", p.Name, err)
		}
	}
	return nil
}

func allEnded(pods map[int]*corev1.Pod) bool {
	for _, p := range pods {
		if !terminal(p) {
			return false
		}
	}
	return true
}

// Abort records the attempt as stopped and deletes its pods, letting them
// have grace to end. An attempt that had already ended keeps its status.
func (b *Backend) Abort(ctx context.Context, id job.AttemptID, grace time.Duration) error {
	a := names(id)
	if _, ok := b.record(a); ok {
		return b.deletePods(ctx, a, &grace)
	}
	st := job.Status{State: job.StateExited, ExitCode: -1, Signal: "SIGTERM", FinishedAt: time.Now()}
	if spec := b.spec(id); spec != nil {
		if d := decide(spec, b.podsOf(a), time.Now(), b.lim); d.State == job.StateExited {
			st = d
		}
	}
	if _, err := b.writeRecord(ctx, a, st); err != nil {
		return err
	}
	return b.deletePods(ctx, a, &grace)
}

// deletePods deletes every pod of the attempt.
func (b *Backend) deletePods(ctx context.Context, a attempt, grace *time.Duration) error {
	opts := metav1.DeleteOptions{}
	if grace != nil {
		s := int64(grace.Seconds())
		opts.GracePeriodSeconds = &s
	}
	err := b.core.deleteCollection(ctx, "pods", opts, LabelJob+"="+a.Base)
	if err != nil {
		return fmt.Errorf("deleting the pods of %s: %w", a.ID, err)
	}
	return nil
}

// recordName is the config map holding an attempt's decided status.
func (a attempt) recordName() string { return a.Base + "-status" }

// record returns the attempt's recorded status, if it has one: one this
// process wrote or read, else one an earlier process left in the cluster.
func (b *Backend) record(a attempt) (job.Status, bool) {
	b.mu.Lock()
	st, ok := b.decided[a.ID]
	b.mu.Unlock()
	if ok {
		return st, true
	}
	cm, err := b.records.ConfigMaps(b.ns).Get(a.recordName())
	if err != nil {
		return job.Status{}, false
	}
	return parseRecord(a, cm)
}

func parseRecord(a attempt, cm *corev1.ConfigMap) (job.Status, bool) {
	var st job.Status
	if cm.Annotations[AnnoAttemptID] != a.ID.String() || json.Unmarshal([]byte(cm.Data["status"]), &st) != nil {
		return job.Status{}, false
	}
	return st, true
}

// writeRecord stores a decided status before the pods that showed it are
// deleted, and returns the decision that stands: the first one written,
// which may be another engine's.
func (b *Backend) writeRecord(ctx context.Context, a attempt, st job.Status) (job.Status, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return job.Status{}, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta(a, a.recordName(), b.shape), Data: map[string]string{"status": string(data)}}
	err = b.core.create(ctx, "configmaps", cm)
	if apierrors.IsAlreadyExists(err) {
		var standing corev1.ConfigMap
		if err := b.core.get(ctx, "configmaps", a.recordName(), &standing); err != nil {
			return job.Status{}, fmt.Errorf("reading the status record of %s: %w", a.ID, err)
		}
		var ok bool
		if st, ok = parseRecord(a, &standing); !ok {
			return job.Status{}, fmt.Errorf("config map %s is not the status record of %s", a.recordName(), a.ID)
		}
	} else if err != nil {
		return job.Status{}, fmt.Errorf("recording the status of %s: %w", a.ID, err)
	}
	b.mu.Lock()
	b.decided[a.ID] = st
	b.mu.Unlock()
	return st, nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
