package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

const untilTold = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: evictable}
spec:
  image: busybox:1.36
  tasks:
  - {name: work, command: [sleep, "3600"]}
`

// An evicted pod is the cluster's failure, not the task's: a task with
// no retries of its own runs again, and the record says why.
func TestKubeEvictionIsRetriedFromTheSystemBudget(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	home := c.home(t)
	cmd := startKiln(t, home, "run", writeFile(t, t.TempDir(), "evictable.yaml", untilTold))
	id := newestRun(t, home)
	waitPods(t, c, id, 1)
	c.setPod(t, c.pods(t, id)[0].Name, func(p *corev1.Pod) {
		p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
		p.Status.Message = "The node was low on resource: memory."
	})
	waitFor(t, "a second attempt's pod", func() bool {
		for _, p := range c.pods(t, id) {
			if p.Labels["kiln.dev/attempt"] == "2" && p.Status.Phase == corev1.PodRunning {
				return true
			}
		}
		return false
	})
	for _, p := range c.pods(t, id) {
		if p.Labels["kiln.dev/attempt"] == "2" {
			c.setPod(t, p.Name, func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodSucceeded
				p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", FinishedAt: metav1.Now(),
				}}
			})
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kiln run: %v", err)
	}
	run := describe(t, home, id)
	attempts := run.Status.Nodes[0].Attempts
	if run.Status.Phase != apiv1.PhaseSucceeded || len(attempts) != 2 {
		t.Fatalf("run %s with %d attempts, want Succeeded on a second", run.Status.Phase, len(attempts))
	}
	if a := attempts[0]; !a.System || a.Code != apiv1.CodeEvicted || !strings.Contains(a.Message, "low on resource") {
		t.Errorf("first attempt = %+v, want a system failure %s with the kubelet's words", a, apiv1.CodeEvicted)
	}
}

// setPod changes pod name's status as a kubelet would report it.
func (c *cluster) setPod(t *testing.T, name string, change func(*corev1.Pod)) {
	t.Helper()
	pods := c.cs.CoreV1().Pods(c.ns)
	p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(p)
	if _, err := pods.UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
