package v1alpha1

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

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

// podTemplateFields is PodTemplate without its methods: what encoding/json
// reads and writes inside them.
type podTemplateFields PodTemplate

// MarshalJSON writes the template as its fields. It exists so that
// encoding/json learns the shape of a Kubernetes pod spec (hundreds of
// types) only when a template is there: a struct's encoder, which reading
// JSON builds too, is otherwise built with every type under it, and that
// cost every kiln process that read or wrote a Workflow 4 ms.
func (p PodTemplate) MarshalJSON() ([]byte, error) {
	return json.Marshal(podTemplateFields(p))
}

// UnmarshalJSON reads the template's fields (see MarshalJSON). Unknown
// fields are left to the reader of the whole document to refuse, as
// everywhere else: workflow.DecodeWorkflow finds them before decoding.
func (p *PodTemplate) UnmarshalJSON(b []byte) error {
	return json.Unmarshal(b, (*podTemplateFields)(p))
}

// LabelKueueQueue is the label that, on a pod template (or a TrainJob), names
// the Kueue LocalQueue that admits the task's pods on Kubernetes, as
// Kueue's own job integrations read it.
const LabelKueueQueue = "kueue.x-k8s.io/queue-name"
