package kube

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/training"
)

// elasticSpec builds, with the torch plugin, the spec of an elastic job
// (minNodes 2, maxNodes 3) on nodes of the backend's network.
func elasticSpec(t *testing.T, h *harness, id job.AttemptID, nodes int) *job.Spec {
	t.Helper()
	two, three := int32(2), int32(3)
	one := apiv1.Quantity("1")
	task := &apiv1.TrainTask{Runtime: "elastic", Trainer: apiv1.Trainer{Command: []string{"torchrun", "train.py"}}, ResolvedRuntime: &apiv1.TrainingRuntimeSpec{
		MLPolicy: &apiv1.MLPolicy{Torch: &apiv1.TorchPolicy{NumProcPerNode: &one, ElasticPolicy: &apiv1.ElasticPolicy{MinNodes: &two, MaxNodes: &three}}},
	}}
	j, problems := training.Merge(task, nil)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	netw, err := h.Network(context.Background(), id, nodes, 1)
	if err != nil {
		t.Fatal(err)
	}
	spec := withAnnotations(&job.Spec{ID: id}, nil)
	if err := j.Plugin.Build(j, &training.Input{Command: task.Command, Network: netw, Attempt: id}, spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

func envOf(pod *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, e := range pod.Spec.Containers[0].Env {
		out[e.Name] = e.Value
	}
	return out
}

// endPod ends pod's container as a kubelet would report it.
func endPod(t *testing.T, h *harness, pod corev1.Pod, phase corev1.PodPhase, code int32) {
	t.Helper()
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: "Error", FinishedAt: metav1.Now(),
	}}
	if _, err := h.c.Client.CoreV1().Pods(h.ns).UpdateStatus(context.Background(), &pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestElasticPodsMeetOnNodeZeroAndOutliveALostPod(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := context.Background()
	spec := elasticSpec(t, h, mustID("r-elast/trainer/1"), 3)
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	eventually(t, "the gang's pods to run", func() bool {
		pods = h.pods(t, spec.ID)
		return len(pods) == 3 && !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
	})
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	host0 := names(spec.ID).podName(0, true) + "." + names(spec.ID).Base
	for k, pod := range pods {
		env := envOf(&pod)
		want := map[string]string{
			"PET_RDZV_BACKEND": "c10d", "PET_RDZV_ENDPOINT": host0 + ":29500", "PET_RDZV_ID": "r-elast-trainer-1",
			"PET_NNODES": "2:3", "PET_MAX_RESTARTS": "3", "PET_NPROC_PER_NODE": "1",
			"PET_RDZV_CONF": "is_host=" + map[bool]string{true: "true", false: "false"}[k == 0],
		}
		for name, v := range want {
			if env[name] != v {
				t.Errorf("pod %s: %s=%q, want %q", pod.Name, name, env[name], v)
			}
		}
	}

	endPod(t, h, pods[2], corev1.PodFailed, 137) // node-2 is lost: the gang goes on
	eventually(t, "the backend to see node-2 fail", func() bool {
		st, err := h.Observe(ctx, spec)
		return err == nil && st.State == job.StateRunning && slices.Equal(st.Dropped, []string{"node-2"})
	})
	if r := h.wait(t, spec.ID); r.State != job.StateRunning || !slices.Equal(r.Dropped, []string{"node-2"}) {
		t.Fatalf("reported %+v when the gang lost one node of three (minNodes 2), want it running on without node-2", r)
	}
	if left := h.pods(t, spec.ID); len(left) != 3 {
		t.Errorf("%d pods left, want the survivors kept running and the lost one kept for its logs", len(left))
	}
	endPod(t, h, pods[0], corev1.PodSucceeded, 0)
	endPod(t, h, pods[1], corev1.PodSucceeded, 0)
	st := h.wait(t, spec.ID)
	if !st.Succeeded() || !slices.Equal(st.Dropped, []string{"node-2"}) {
		t.Errorf("got %+v, want success with node-2 dropped", st)
	}
}

func TestElasticGangGrowsByAPod(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := context.Background()
	id := mustID("r-grown/trainer/1")
	spec := elasticSpec(t, h, id, 2)
	if err := h.Launch(ctx, spec); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the gang's 2 pods to run", func() bool { return len(h.pods(t, id)) == 2 })
	grown := elasticSpec(t, h, id, 3)
	if err := h.Join(ctx, grown, 2); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	eventually(t, "the third pod to run", func() bool {
		pods = h.pods(t, id)
		return len(pods) == 3 && !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning })
	})
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	if env := envOf(&pods[2]); env["PET_NNODES"] != "2:3" || env["PET_RDZV_CONF"] != "is_host=false" || !strings.HasPrefix(env["PET_RDZV_ENDPOINT"], names(id).podName(0, true)) {
		t.Errorf("the joined pod's env = %v, want it to meet the others on node 0", env)
	}
	for _, p := range pods {
		endPod(t, h, p, corev1.PodSucceeded, 0)
	}
	if st := h.wait(t, id); !st.Succeeded() || len(st.Processes) != 3 {
		t.Errorf("got %+v, want success of all 3 nodes", st)
	}
}
