package workflow

import (
	"maps"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// withQueueLabel is tj's pod template carrying the Kueue queue that tj's
// metadata.labels name, as Kueue reads it from a Trainer TrainJob: a
// copy, so tj stays as written. A queue the pod template names itself
// stands.
func withQueueLabel(tj *apiv1.TrainJob) *apiv1.PodTemplate {
	q := tj.Metadata.Labels[apiv1.LabelKueueQueue]
	pt := tj.Spec.PodTemplate
	if q == "" || pt != nil && pt.Metadata.Labels[apiv1.LabelKueueQueue] != "" {
		return pt
	}
	out := &apiv1.PodTemplate{}
	if pt != nil {
		*out = *pt
	}
	out.Metadata.Labels = maps.Clone(out.Metadata.Labels)
	if out.Metadata.Labels == nil {
		out.Metadata.Labels = map[string]string{}
	}
	out.Metadata.Labels[apiv1.LabelKueueQueue] = q
	return out
}

// queueIgnored names, for the local backend, each task of plan (compiled
// from a document of kind) that a Kueue queue admits on Kubernetes: the
// local backend starts it without.
func queueIgnored(kind string, plan *Plan) []Ignored {
	var out []Ignored
	for _, t := range plan.Tasks {
		if t.PodTemplate == nil || t.PodTemplate.Metadata.Labels[apiv1.LabelKueueQueue] == "" {
			continue
		}
		field := "task " + t.Spec.Name + " podTemplate.metadata.labels[" + apiv1.LabelKueueQueue + "]"
		if kind == apiv1.KindTrainJob {
			field = "metadata.labels[" + apiv1.LabelKueueQueue + "]"
		}
		out = append(out, Ignored{
			Field: field, Backends: []string{backendLocal},
			Reason: "Kueue admits jobs on Kubernetes only; the local backend starts the task without waiting for a queue",
		}, Ignored{
			Field: field, Backends: []string{backendSlurm},
			Reason: "Kueue admits jobs on Kubernetes only; on Slurm the job waits in Slurm's own queue",
		})
	}
	return out
}
