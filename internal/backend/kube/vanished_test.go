package kube

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/testcluster"
)

// staticGang is a static gang of n hosts, one process each.
func staticGang(id string, n int) *job.Spec {
	spec := withAnnotations(&job.Spec{ID: mustID(id)}, nil)
	for i := range n {
		spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d", i), Host: i, Command: []string{"x"}})
	}
	return spec
}

// openBackend starts a backend of its own on the test cluster's namespace,
// as a restarted kiln would.
func openBackend(t *testing.T, c *testcluster.Cluster) *Backend {
	t.Helper()
	b, err := New(t.Context(), Config{Kubeconfig: c.Kubeconfig, Namespace: c.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func podNames(t *testing.T, c *testcluster.Cluster, id job.AttemptID) []string {
	t.Helper()
	l, err := c.Client.CoreV1().Pods(c.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: LabelJob + "=" + names(id).Base})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

// A pod of a running gang deleted while no kiln watched fails the attempt
// when a new kiln adopts it, as the watch fails it when kiln is up; the
// pod is never created again into the rendezvous the others formed.
func TestPodVanishedWhileDownFailsTheAdoptedGang(t *testing.T) {
	c := testcluster.Connect(t)
	ctx := t.Context()
	spec := staticGang("r-vanis/train/1", 3)
	first := openBackend(t, c)
	if err := first.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gang to run", func() bool {
		st, err := first.Observe(ctx, spec)
		pods := first.podsOf(names(spec.ID))
		return err == nil && st.State == job.StateRunning && len(pods) == 3 &&
			!slices.ContainsFunc([]int{0, 1, 2}, func(h int) bool { return pods[h].Status.Phase != corev1.PodRunning })
	})
	first.Close() // kiln goes down; the gang runs on

	lost := names(spec.ID).podName(1, true)
	zero := int64(0)
	if err := c.Client.CoreV1().Pods(c.Namespace).Delete(ctx, lost, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pod to be gone", func() bool { return !slices.Contains(podNames(t, c, spec.ID), lost) })

	adopter := openBackend(t, c)
	st, err := adopter.Observe(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != job.StateExited || st.Code != string(apiv1.CodePodLost) || !strings.Contains(st.Message, lost) {
		t.Fatalf("adopting the gang gave %+v, want it failed with %s naming %s", st, apiv1.CodePodLost, lost)
	}
	// Were the engine to launch it again, nothing is created: the record stands.
	if err := adopter.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rest of the gang to be stopped", func() bool { return len(podNames(t, c, spec.ID)) == 0 })
	if again, err := openBackend(t, c).Observe(ctx, spec); err != nil || again.Code != st.Code {
		t.Errorf("a third kiln reads %+v, %v; want the recorded %s", again, err, st.Code)
	}
}

// A launch interrupted before every pod (and so the Service) was created
// is completed by the engine that adopts it.
func TestInterruptedLaunchIsCompletedOnAdoption(t *testing.T) {
	c := testcluster.Connect(t)
	ctx := t.Context()
	spec := staticGang("r-inter/train/1", 3)
	objs, err := build(spec, shape{Namespace: c.Namespace})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range objs.Pods[:2] { // kiln stopped before the third pod
		if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	adopter := openBackend(t, c)
	eventually(t, "the two pods in the cache", func() bool { return len(adopter.podsOf(names(spec.ID))) == 2 })
	st, err := adopter.Observe(ctx, spec)
	if err != nil || st.State != job.StateUnknown {
		t.Fatalf("adopting a half-launched gang gave %+v, %v; want StateUnknown so that it is launched", st, err)
	}
	if err := adopter.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	// Right after Launch the cache may lack the new pod while the Service
	// exists: that is a launch in flight, not a lost pod.
	if st, err := adopter.Observe(ctx, spec); err != nil || st.State == job.StateExited {
		t.Fatalf("Observe right after the relaunch = %+v, %v; want the gang not ended", st, err)
	}
	want := []string{names(spec.ID).podName(0, true), names(spec.ID).podName(1, true), names(spec.ID).podName(2, true)}
	if got := podNames(t, c, spec.ID); !slices.Equal(got, want) {
		t.Fatalf("pods after the relaunch = %v, want %v", got, want)
	}
	if _, err := c.Client.CoreV1().Services(c.Namespace).Get(ctx, names(spec.ID).Base, metav1.GetOptions{}); err != nil {
		t.Fatalf("the completed launch has no Service: %v", err)
	}
	eventually(t, "the completed gang to run", func() bool {
		st, err := adopter.Observe(ctx, spec)
		return err == nil && st.State == job.StateRunning
	})
}
