package workflow

import (
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// mergePodTemplates returns top merged over base: labels and annotations
// key by key, the pod spec as kubectl apply merges it (containers,
// volumes and env by name). Either may be nil.
func mergePodTemplates(base, top *apiv1.PodTemplate) (*apiv1.PodTemplate, error) {
	switch {
	case base == nil:
		return top, nil
	case top == nil:
		return base, nil
	}
	out := &apiv1.PodTemplate{Metadata: apiv1.PodMetadata{
		Labels:      mergeStrings(base.Metadata.Labels, top.Metadata.Labels),
		Annotations: mergeStrings(base.Metadata.Annotations, top.Metadata.Annotations),
	}}
	switch {
	case base.Spec == nil:
		out.Spec = top.Spec
	case top.Spec == nil:
		out.Spec = base.Spec
	default:
		spec, err := mergePodSpecs(base.Spec, top.Spec)
		if err != nil {
			return nil, err
		}
		out.Spec = spec
	}
	return out, nil
}

func mergePodSpecs(base, top *corev1.PodSpec) (*corev1.PodSpec, error) {
	b, err := json.Marshal(base)
	if err != nil {
		return nil, err
	}
	t, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	merged, err := strategicpatch.StrategicMergePatch(b, t, corev1.PodSpec{})
	if err != nil {
		return nil, err
	}
	out := &corev1.PodSpec{}
	return out, json.Unmarshal(merged, out)
}

func mergeStrings(base, top map[string]string) map[string]string {
	if len(base)+len(top) == 0 {
		return nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, top)
	return out
}
