package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// kubelet plays the part of a kubelet for the example's pods: each pod that
// runs ends with exit 0, and prepare reports its output as the real
// command would, through its termination message.
func kubelet(ctx context.Context, t *testing.T, c *cluster) {
	done := map[string]bool{}
	for ctx.Err() == nil {
		l, err := c.cs.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		for _, p := range l.Items {
			if p.Status.Phase != corev1.PodRunning || done[p.Name] || len(p.Status.ContainerStatuses) == 0 {
				continue
			}
			msg := ""
			if p.Labels["kiln.dev/node"] == "prepare" {
				msg = "rows 4\n1000"
			}
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", Message: msg, FinishedAt: metav1.Now()}}
			if _, err := c.cs.CoreV1().Pods(c.ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{}); err == nil {
				done[p.Name] = true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestKubeExamplePipeline(t *testing.T) {
	c := newCluster(t)
	home := c.home(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go kubelet(ctx, t, c)
	r := kiln(t, home, "run", filepath.Join(repoRoot(), "examples", "kubernetes", "pipeline.yaml"))
	if r.code != 0 {
		t.Fatalf("kiln run exited %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	id := runID(t, r.stdout)
	if run := describe(t, home, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run is %s", run.Status.Phase)
	}
	for _, p := range c.pods(t, id) {
		switch p.Labels["kiln.dev/node"] {
		case "train":
			if got := strings.Join(p.Spec.Containers[0].Command, " "); !strings.HasSuffix(got, " 1000") {
				t.Errorf("train did not get prepare's output: %s", got)
			}
		case "evaluate":
			if p.Spec.Containers[0].Image != "busybox:1.36" {
				t.Errorf("evaluate runs %s", p.Spec.Containers[0].Image)
			}
		}
		if p.Labels["team"] != "vision" || p.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
			t.Errorf("pod %s lacks the workflow's podTemplate", p.Name)
		}
	}
}
