package v1alpha1

import corev1 "k8s.io/api/core/v1"

// PodTemplate shapes the pods of a task on the kubernetes backend; the
// local backend ignores it. kiln fills in the container named "main"
// (image, command, env, resources) and keeps everything else as written:
// node selectors, tolerations, affinity, service account, volumes, image
// pull secrets, extra containers. Fields of a "main" container in the
// template (volumeMounts, securityContext, envFrom) are kept too.
type PodTemplate struct {
	// Metadata adds labels and annotations to every pod.
	Metadata PodMetadata `json:"metadata,omitempty"`
	// Spec is the base pod spec.
	Spec *corev1.PodSpec `json:"spec,omitempty"`
}

// PodMetadata is the part of a pod's metadata a template may set.
type PodMetadata struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// MainContainer is the name of the container kiln fills in.
const MainContainer = "main"
