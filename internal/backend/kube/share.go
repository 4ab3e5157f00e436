package kube

import (
	corev1 "k8s.io/api/core/v1"

	"kiln.dev/kiln/internal/job"
)

// shares splits what a node asks for (ct's CPU, memory and GPUs: the pod's
// resources) among the n process containers of its pod, so that each
// process of a node that runs several without torchrun gets its part and,
// through the device plugin, its own GPUs: Kubernetes gives a container
// the devices it asks for and no others. Each container gets the quotient;
// the remainder (milli-CPUs, bytes, GPUs) goes one unit each to the first
// containers, in process order, so the parts add up to exactly what the
// node asked and the scheduler places the pod as before. With fewer GPUs
// than processes the last processes get none: a device is never shared
// between containers. Only the resources are split; the rest of ct is
// left as it is.
func shares(ct job.Container, n int) []job.Container {
	out := make([]job.Container, n)
	for i := range out {
		out[i] = ct
		out[i].MilliCPU = part(ct.MilliCPU, n, i)
		out[i].Memory = part(ct.Memory, n, i)
		out[i].GPU = part(ct.GPU, n, i)
	}
	return out
}

// part is container i's share of total among n: the quotient, plus one
// for the first total%n containers.
func part(total int64, n, i int) int64 {
	q, r := total/int64(n), total%int64(n)
	if int64(i) < r {
		q++
	}
	return q
}

// noGPUs is the environment of a process container that got no GPU of a
// node that has some: NVIDIA's container runtime shows a container every
// GPU of its machine when its image says NVIDIA_VISIBLE_DEVICES=all (as
// CUDA images do) and the device plugin gave it none, so such a process
// would see, and share, its neighbours' GPUs. "void" shows it none.
func noGPUs(node, share job.Container) []corev1.EnvVar {
	if node.GPU == 0 || share.GPU > 0 {
		return nil
	}
	return []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "void"}}
}
