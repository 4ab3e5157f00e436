package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// An attempt whose spec names a Kueue queue (job.Container.Queue) is
// admitted by Kueue the way Kueue's own job integrations are: kiln
// creates a Workload for it (one pod set per distinct pod shape, no
// owner, so that Kueue lets it go when kiln deletes it) and no pods; once
// Kueue admits the Workload, kiln creates the pods on the flavor's nodes
// (the ResourceFlavor's node labels and tolerations), then the Service.
// While it waits the attempt runs, queued, with Kueue's reason. An
// eviction (preemption) fails the attempt as the system's fault; its end
// marks the Workload Finished, which gives its quota back at once, and
// Release deletes it with the attempt's other objects.

// Kueue's resources kiln uses.
var (
	workloadGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta1", Resource: "workloads"}
	flavorGVR   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta1", Resource: "resourceflavors"}
)

// Queue reasons of an attempt that Kueue admits.
const (
	// ReasonKueue: Kueue has not admitted the attempt's Workload yet.
	ReasonKueue = "WaitingForKueue"
	// ReasonKueueAdmitted: Kueue admitted it; its pods were just created.
	ReasonKueueAdmitted = "AdmittedByKueue"
)

// Workload condition types (kueue.x-k8s.io/v1beta1).
const (
	condQuotaReserved = "QuotaReserved"
	condAdmitted      = "Admitted"
	condEvicted       = "Evicted"
	condFinished      = "Finished"
)

// workloads is the informer of kiln's Workloads, started with the first
// attempt that names a queue (a cluster without Kueue never serves them).
func (b *Backend) workloads() cache.SharedIndexInformer {
	b.kueueOnce.Do(func() {
		b.kueueInf = dynamicInformer(b.dynamic.Resource(workloadGVR).Namespace(b.ns), LabelManagedBy+"="+managedBy, b.cfg.Resync)
		notify := func(obj any) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				if id, ok := attemptOf(u.GetAnnotations()); ok {
					b.notify(id)
				}
			}
		}
		_, _ = b.kueueInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: notify, UpdateFunc: func(_, obj any) { notify(obj) },
		})
		go b.kueueInf.Run(b.stop)
	})
	return b.kueueInf
}

// workload is the attempt's Workload, from the informer's cache, else
// from the API server (one just created); nil when there is none.
func (b *Backend) workload(ctx context.Context, a attempt) (*unstructured.Unstructured, error) {
	if o, ok, _ := b.workloads().GetStore().GetByKey(b.ns + "/" + a.Base); ok {
		if u, ok := o.(*unstructured.Unstructured); ok && u.GetAnnotations()[AnnoAttemptID] == a.ID.String() {
			return u, nil
		}
	}
	u, err := b.dynamic.Resource(workloadGVR).Namespace(b.ns).Get(ctx, a.Base, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading workload %s: %w", a.Base, err)
	case u.GetAnnotations()[AnnoAttemptID] != a.ID.String():
		return nil, fmt.Errorf("workload %s is not attempt %s's", a.Base, a.ID)
	}
	return u, nil
}

// admitted creates the attempt's Workload unless it exists and reports
// whether Kueue has admitted it; if so, it puts the pods on the admitting
// flavors' nodes.
func (b *Backend) admitted(ctx context.Context, spec *job.Spec, pods []*corev1.Pod) (bool, error) {
	a := names(spec.ID)
	wl, err := b.workload(ctx, a)
	if err != nil {
		return false, err
	}
	if wl == nil {
		wl, err = b.dynamic.Resource(workloadGVR).Namespace(b.ns).Create(ctx, workloadOf(a, spec, pods, b.shape), metav1.CreateOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return false, &apiv1.Error{Code: apiv1.CodeKueueMissing, Message: fmt.Sprintf(
				"the task names Kueue queue %q (label %s), but the cluster serves no Kueue Workloads (kueue.x-k8s.io/v1beta1): install Kueue, or drop the label",
				spec.Container.Queue, apiv1.LabelKueueQueue)}
		case apierrors.IsAlreadyExists(err):
			return false, nil // another engine made it; the informer brings it
		case err != nil:
			return false, fmt.Errorf("creating workload %s: %w", a.Base, err)
		}
	}
	if !isTrue(wl, condAdmitted) {
		return false, nil
	}
	return true, b.placeOnFlavors(ctx, wl, pods)
}

// podSetOf names the pod set of a pod: pods of one shape (the same
// containers' requests) share one, as Kueue counts them.
func podSetOf(pods []*corev1.Pod) (names []string, sets []*corev1.Pod, counts []int) {
	for _, p := range pods {
		i := slices.IndexFunc(sets, func(q *corev1.Pod) bool { return sameShape(p, q) })
		if i < 0 {
			sets, counts = append(sets, p), append(counts, 0)
			i = len(sets) - 1
		}
		counts[i]++
		names = append(names, podSetName(i))
	}
	return names, sets, counts
}

func podSetName(i int) string {
	if i == 0 {
		return "main"
	}
	return fmt.Sprintf("main-%d", i)
}

// sameShape reports whether two pods ask for the same resources on the
// same kind of node (their containers are named after their processes).
func sameShape(p, q *corev1.Pod) bool {
	unnamed := func(p *corev1.Pod) corev1.PodSpec {
		s := trimmed(p)
		for i := range s.Containers {
			s.Containers[i].Name = ""
		}
		return s
	}
	return equalJSON(unnamed(p), unnamed(q))
}

func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// trimmed is what Kueue needs of a pod to admit it: its containers'
// requests and where it may run.
func trimmed(p *corev1.Pod) corev1.PodSpec {
	strip := func(cs []corev1.Container) []corev1.Container {
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Image: c.Image, Resources: c.Resources}
		}
		return out
	}
	return corev1.PodSpec{
		Containers: strip(p.Spec.Containers), InitContainers: strip(p.Spec.InitContainers),
		NodeSelector: p.Spec.NodeSelector, Tolerations: p.Spec.Tolerations, Affinity: p.Spec.Affinity,
		PriorityClassName: p.Spec.PriorityClassName, Overhead: p.Spec.Overhead,
	}
}

// workloadOf is the attempt's Workload: its pods' pod sets in queue q.
func workloadOf(a attempt, spec *job.Spec, pods []*corev1.Pod, sh shape) *unstructured.Unstructured {
	_, sets, counts := podSetOf(pods)
	var podSets []any
	for i, p := range sets {
		tmpl, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{Spec: trimmed(p)})
		delete(tmpl, "metadata") // empty, but for a null creationTimestamp
		podSets = append(podSets, map[string]any{"name": podSetName(i), "count": int64(counts[i]), "template": tmpl})
	}
	m := meta(a, a.Base, sh)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": workloadGVR.GroupVersion().String(), "kind": "Workload",
		"spec": map[string]any{"queueName": spec.Container.Queue, "podSets": podSets},
	}}
	u.SetName(m.Name)
	u.SetNamespace(m.Namespace)
	u.SetLabels(m.Labels)
	u.SetAnnotations(m.Annotations)
	return u
}

// placeOnFlavors adds to each pod the node labels and tolerations of the
// ResourceFlavors Kueue admitted its pod set in, as Kueue does for its
// own jobs when it starts them.
func (b *Backend) placeOnFlavors(ctx context.Context, wl *unstructured.Unstructured, pods []*corev1.Pod) error {
	assigned, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	flavors := map[string][]string{} // pod set -> flavors
	for _, x := range assigned {
		m, _ := x.(map[string]any)
		name, _ := m["name"].(string)
		fs, _ := m["flavors"].(map[string]any)
		for _, f := range fs {
			if s, ok := f.(string); ok && !slices.Contains(flavors[name], s) {
				flavors[name] = append(flavors[name], s)
			}
		}
	}
	sets, _, _ := podSetOf(pods)
	for i, p := range pods {
		for _, f := range flavors[sets[i]] {
			rf, err := b.dynamic.Resource(flavorGVR).Get(ctx, f, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("reading Kueue's resource flavor %s: %w", f, err)
			}
			labels, _, _ := unstructured.NestedStringMap(rf.Object, "spec", "nodeLabels")
			if len(labels) > 0 {
				p.Spec.NodeSelector = merged(p.Spec.NodeSelector, labels)
			}
			var spec struct {
				Tolerations []corev1.Toleration `json:"tolerations"`
			}
			if raw, ok := rf.Object["spec"].(map[string]any); ok {
				_ = runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec)
			}
			p.Spec.Tolerations = append(p.Spec.Tolerations, spec.Tolerations...)
		}
	}
	return nil
}

// condition is the Workload's condition of type t, or nil.
func condition(wl *unstructured.Unstructured, t string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return m
		}
	}
	return nil
}

func isTrue(wl *unstructured.Unstructured, t string) bool {
	c := condition(wl, t)
	return c != nil && c["status"] == "True"
}

// kueueGate decides an attempt that Kueue admits as long as its pods do
// not decide it: wait is true while it waits for Kueue (st says why), or
// when Kueue ended it (evicted: st is its end). An admitted attempt whose
// launch was not finished (its pods not created yet) is launched.
func (b *Backend) kueueGate(ctx context.Context, spec *job.Spec) (st job.Status, wait bool, err error) {
	a := names(spec.ID)
	pods := b.podsOf(a)
	wl, err := b.workload(ctx, a)
	switch {
	case err != nil:
		return job.Status{}, true, err
	case wl == nil && len(pods) == 0:
		return job.Status{State: job.StateUnknown}, true, nil // launch it (again): it makes the Workload
	case wl == nil:
		return job.Status{}, false, nil
	case isTrue(wl, condEvicted) && !allEnded(pods):
		return b.evicted(ctx, a, wl, pods)
	case !isTrue(wl, condAdmitted):
		if len(pods) > 0 {
			return job.Status{}, false, nil // evicted and requeued, or finished: the pods decide
		}
		return kueueWaiting(spec, wl, time.Now())
	case len(pods) == len(hosts(spec)):
		return job.Status{}, false, nil
	}
	if isGang(spec) {
		// A whole gang that lost a pod since is not launched again.
		if lost, err := b.vanished(ctx, spec, pods); err != nil || lost != "" {
			return job.Status{}, false, err
		}
	}
	if err := b.Launch(ctx, spec); err != nil {
		return job.Status{}, true, err
	}
	return job.Status{State: job.StateRunning, Queue: &job.Queue{
		Reason: ReasonKueueAdmitted, Processes: processNames(spec),
		Message: fmt.Sprintf("workload %s was admitted by Kueue in queue %s; its pods were just created", a.Base, spec.Container.Queue),
	}}, true, nil
}

// kueueWaiting is the status of an attempt whose Workload Kueue has not
// admitted: running, queued with Kueue's own reason, or failed once the
// task's admission timeout (counted from the Workload's creation) passed.
func kueueWaiting(spec *job.Spec, wl *unstructured.Unstructured, now time.Time) (job.Status, bool, error) {
	why := "Kueue has not looked at it yet: is Kueue running?"
	if c := condition(wl, condQuotaReserved); c != nil {
		why = fmt.Sprintf("%v: %v", c["reason"], c["message"])
	}
	if c := condition(wl, condAdmitted); c != nil && isTrue(wl, condQuotaReserved) {
		// Quota reserved; its admission checks have not all passed.
		why = fmt.Sprintf("quota reserved, not admitted: %v: %v", c["reason"], c["message"])
	}
	msg := fmt.Sprintf("workload %s waits in Kueue queue %s: %s", wl.GetName(), spec.Container.Queue, why)
	if t := spec.Container.ScheduleTimeout; t > 0 && now.Sub(wl.GetCreationTimestamp().Time) >= t {
		return job.Status{
			State: job.StateExited, ExitCode: -1, Code: string(apiv1.CodeScheduleTimeout), Permanent: true,
			Message: fmt.Sprintf("not admitted by Kueue within the admission timeout %s: %s", t, msg),
		}, true, nil
	}
	return job.Status{State: job.StateRunning, Queue: &job.Queue{Reason: ReasonKueue, Message: msg, Processes: processNames(spec)}}, true, nil
}

// evicted ends an attempt whose Workload Kueue evicted (preempted it,
// deactivated it): the system's doing, so the attempt is retried from
// the system's budget. The decision is recorded before the pods go.
func (b *Backend) evicted(ctx context.Context, a attempt, wl *unstructured.Unstructured, pods map[int]*corev1.Pod) (job.Status, bool, error) {
	c := condition(wl, condEvicted)
	st := job.Status{
		State: job.StateExited, ExitCode: -1, System: true, Code: string(apiv1.CodeKueueEvicted),
		Message: fmt.Sprintf("Kueue evicted workload %s (%v): %v", wl.GetName(), c["reason"], c["message"]),
	}
	st, err := b.writeRecord(ctx, a, st)
	if err != nil {
		return job.Status{}, true, err
	}
	return st, true, b.deleteUnended(ctx, pods)
}

// finishWorkload marks the ended attempt's Workload Finished, so that
// Kueue gives its quota back at once rather than when it is deleted.
func (b *Backend) finishWorkload(ctx context.Context, spec *job.Spec, st job.Status) {
	a := names(spec.ID)
	b.mu.Lock()
	done := b.finished[spec.ID]
	b.mu.Unlock()
	if done {
		return
	}
	wl, err := b.workload(ctx, a)
	if err == nil && wl != nil && !isTrue(wl, condFinished) {
		wl = wl.DeepCopy()
		conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
		reason, msg := "Succeeded", "the kiln attempt succeeded"
		if st.ExitCode != 0 || st.Code != "" {
			reason, msg = "Failed", "the kiln attempt failed: "+st.Message
		}
		conds = append(conds, map[string]any{
			"type": condFinished, "status": "True", "reason": reason, "message": msg,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "observedGeneration": wl.GetGeneration(),
		})
		if err = unstructured.SetNestedSlice(wl.Object, conds, "status", "conditions"); err == nil {
			_, err = b.dynamic.Resource(workloadGVR).Namespace(b.ns).UpdateStatus(ctx, wl, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		b.cfg.Log.Warn("marking a Kueue workload finished; will retry", "attempt", spec.ID, "err", err)
		return
	}
	b.mu.Lock()
	b.finished[spec.ID] = true
	b.mu.Unlock()
}

// deleteWorkloads deletes the Workloads sel selects. A cluster without
// Kueue, or a role without Kueue's rules, has none of kiln's.
func (b *Backend) deleteWorkloads(ctx context.Context, sel string) error {
	err := b.dynamic.Resource(workloadGVR).Namespace(b.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel})
	if ignoreNotFound(err) == nil || apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
		return nil
	}
	return fmt.Errorf("deleting Kueue workloads: %w", err)
}

// kueueHeld reports whether st is of an attempt whose pods Kueue has
// not let kiln create yet (or that were just created): its Service, which
// says that every pod was created, must not come before them.
func kueueHeld(st job.Status) bool {
	return st.Queue != nil && (st.Queue.Reason == ReasonKueue || st.Queue.Reason == ReasonKueueAdmitted)
}

// processNames lists the attempt's processes.
func processNames(spec *job.Spec) []string {
	out := make([]string, len(spec.Processes))
	for i, p := range spec.Processes {
		out[i] = p.Name
	}
	return out
}

// withoutQueueLabel drops the queue label from a pod's labels: kiln admits
// the pod through its Workload, and Kueue's pod integration (where a
// cluster enables it) must not gate it a second time.
func withoutQueueLabel(labels map[string]string) map[string]string {
	if _, ok := labels[apiv1.LabelKueueQueue]; !ok {
		return labels
	}
	out := maps.Clone(labels)
	delete(out, apiv1.LabelKueueQueue)
	return out
}
