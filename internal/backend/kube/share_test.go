package kube

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kiln.dev/kiln/internal/job"
)

func TestShares(t *testing.T) {
	t.Parallel()
	type r struct{ cpu, mem, gpu int64 }
	cases := map[string]struct {
		node r
		n    int
		want []r
	}{
		"one process keeps the node":         {r{4000, 1 << 30, 2}, 1, []r{{4000, 1 << 30, 2}}},
		"an even split":                      {r{4000, 8 << 30, 4}, 4, []r{{1000, 2 << 30, 1}, {1000, 2 << 30, 1}, {1000, 2 << 30, 1}, {1000, 2 << 30, 1}}},
		"remainders go to the first":         {r{1001, 10, 5}, 3, []r{{334, 4, 2}, {334, 3, 2}, {333, 3, 1}}},
		"fewer GPUs than processes":          {r{0, 0, 2}, 3, []r{{0, 0, 1}, {0, 0, 1}, {0, 0, 0}}},
		"nothing asked gives nothing to all": {r{}, 2, []r{{}, {}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ct := job.Container{Image: "img", MilliCPU: tc.node.cpu, Memory: tc.node.mem, GPU: tc.node.gpu}
			var got []r
			var sum r
			for _, s := range shares(ct, tc.n) {
				if s.Image != "img" {
					t.Errorf("a share lost the rest of the container: %+v", s)
				}
				got = append(got, r{s.MilliCPU, s.Memory, s.GPU})
				sum = r{sum.cpu + s.MilliCPU, sum.mem + s.Memory, sum.gpu + s.GPU}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(r{})); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
			if sum != tc.node {
				t.Errorf("shares add up to %+v, want the node's %+v", sum, tc.node)
			}
		})
	}
}

// multiProc is a gang of hosts nodes running procs processes each
// without torchrun: a container per process.
func multiProc(id string, hosts, procs int, ct job.Container) *job.Spec {
	spec := withAnnotations(&job.Spec{ID: mustID(id)}, nil)
	spec.Container.MilliCPU, spec.Container.Memory, spec.Container.GPU = ct.MilliCPU, ct.Memory, ct.GPU
	for h := range hosts {
		for p := range procs {
			spec.Processes = append(spec.Processes, job.Process{Name: fmt.Sprintf("node-%d-%d", h, p), Host: h, Command: []string{"x"}})
		}
	}
	return spec
}

// wantShares checks every process container of pod against its part of
// the node's resources; requests of memory and GPUs are also limits.
func wantShares(t *testing.T, pod *corev1.Pod, want [][3]string) {
	t.Helper()
	if len(pod.Spec.Containers) != len(want) {
		t.Fatalf("pod %s has %d containers, want %d", pod.Name, len(pod.Spec.Containers), len(want))
	}
	for i, c := range pod.Spec.Containers {
		req, lim := c.Resources.Requests, c.Resources.Limits
		gpu := req[GPUResource]
		got := [3]string{req.Cpu().String(), req.Memory().String(), gpu.String()}
		if got != want[i] {
			t.Errorf("pod %s container %s requests cpu, memory, gpu %v, want %v", pod.Name, c.Name, got, want[i])
		}
		limGPU := lim[GPUResource]
		if lim.Memory().String() != want[i][1] || limGPU.String() != want[i][2] {
			t.Errorf("pod %s container %s limits %v, want memory and GPUs limited to the request", pod.Name, c.Name, lim)
		}
	}
}

func TestEveryProcessContainerGetsItsShare(t *testing.T) {
	spec := multiProc("r-share/train/1", 2, 3, job.Container{MilliCPU: 3001, Memory: 3<<30 + 2, GPU: 4})
	objs, err := build(spec, shape{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]string{{"1001m", "1073741825", "2"}, {"1", "1073741825", "1"}, {"1", "1Gi", "1"}}
	for _, p := range objs.Pods {
		wantShares(t, p, want)
	}

	// Two GPUs for three processes: the third sees none, not all.
	objs, err = build(multiProc("r-share/train/1", 1, 3, job.Container{GPU: 2}), shape{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range objs.Pods[0].Spec.Containers {
		got := ""
		for _, e := range c.Env {
			if e.Name == "NVIDIA_VISIBLE_DEVICES" {
				got = e.Value
			}
		}
		if want := map[bool]string{true: "void", false: ""}[i == 2]; got != want {
			t.Errorf("container %s: NVIDIA_VISIBLE_DEVICES=%q, want %q", c.Name, got, want)
		}
	}
}

// The cluster takes the split: the API server accepts the pods as built
// (extended resources need requests equal to limits per container) and
// the scheduler places a node's pod by the sum of its containers.
func TestProcessSharesOnTheCluster(t *testing.T) {
	h := newHarness(t, Config{})
	ctx := t.Context()
	cpu := multiProc("r-share/cpu/1", 2, 3, job.Container{MilliCPU: 7000, Memory: 3 << 30})
	gpu := multiProc("r-share/gpu/1", 1, 4, job.Container{MilliCPU: 1000, Memory: 1 << 30, GPU: 4})
	for _, spec := range []*job.Spec{cpu, gpu} {
		if err := h.Launch(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	// Each node's 7 CPUs are split 2334m, 2333m, 2333m; their sum still
	// fits a node of 8, so the pods are placed and run.
	eventually(t, "the CPU gang to be placed and run", func() bool {
		pods := h.pods(t, cpu.ID)
		return len(pods) == 2 && pods[0].Status.Phase == corev1.PodRunning && pods[1].Status.Phase == corev1.PodRunning
	})
	for _, p := range h.pods(t, cpu.ID) {
		wantShares(t, &p, [][3]string{{"2334m", "1Gi", "0"}, {"2333m", "1Gi", "0"}, {"2333m", "1Gi", "0"}})
	}
	stored, err := h.c.Client.CoreV1().Pods(h.ns).Get(ctx, names(gpu.ID).podName(0, true), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantShares(t, stored, [][3]string{{"250m", "256Mi", "1"}, {"250m", "256Mi", "1"}, {"250m", "256Mi", "1"}, {"250m", "256Mi", "1"}})
}
