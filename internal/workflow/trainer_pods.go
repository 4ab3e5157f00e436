package workflow

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	trainerv1 "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// podPatch is one override of the pods of some of a runtime's jobs, from
// v2.1's podTemplateOverrides or v2.2's runtimePatches.
type podPatch struct {
	field    string // where it is written
	jobs     []string
	jobField func(i int) string
	meta     *trainerv1.PodMetadata
	// metaField is where meta is written.
	metaField string
	spec      *trainerv1.PodSpecOverride
}

// podTemplate gathers spec.labels, spec.annotations, podTemplateOverrides
// and runtimePatches into the pod template of the trainer's pods. They
// shape Kubernetes pods: the local backend ignores them, with a warning.
func (c *conversion) podTemplate(s *trainerv1.TrainJobSpec) *apiv1.PodTemplate {
	pt := &apiv1.PodTemplate{}
	used := false
	for field, m := range map[string]map[string]string{"spec.labels": s.Labels, "spec.annotations": s.Annotations} {
		if len(m) > 0 {
			c.podField(field)
			used = true
		}
	}
	addMeta(pt, &trainerv1.PodMetadata{Labels: s.Labels, Annotations: s.Annotations})
	for _, p := range c.patches(s) {
		if !c.targetsTrainer(p) {
			continue
		}
		c.podField(p.field)
		used = true
		c.metaOthers(p)
		addMeta(pt, p.meta)
		c.addSpec(pt, p)
	}
	if !used {
		return nil
	}
	return pt
}

// patches lists the overrides of both of Trainer's forms.
func (c *conversion) patches(s *trainerv1.TrainJobSpec) []podPatch {
	var out []podPatch
	for i, o := range s.PodTemplateOverrides {
		field := fmt.Sprintf("spec.podTemplateOverrides[%d]", i)
		p := podPatch{field: field, meta: o.Metadata, metaField: field + ".metadata", spec: o.Spec, jobField: func(j int) string { return fmt.Sprintf("%s.targetJobs[%d].name", field, j) }}
		for _, t := range o.TargetJobs {
			p.jobs = append(p.jobs, t.Name)
		}
		out = append(out, p)
	}
	for i, rp := range s.RuntimePatches {
		if rp.TrainingRuntimeSpec == nil || rp.TrainingRuntimeSpec.Template == nil {
			continue
		}
		tf := fmt.Sprintf("spec.runtimePatches[%d].trainingRuntimeSpec.template", i)
		if rp.TrainingRuntimeSpec.Template.Metadata != nil {
			c.ignore(tf+".metadata", "kiln makes no JobSet to label; pod labels go in a replicated job's template.spec.template.metadata")
		}
		if rp.TrainingRuntimeSpec.Template.Spec == nil {
			continue
		}
		for j, rj := range rp.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
			field := fmt.Sprintf("%s.spec.replicatedJobs[%d]", tf, j)
			p := podPatch{field: field, jobs: []string{rj.Name}, jobField: func(int) string { return field + ".name" }}
			if t := rj.Template; t != nil && t.Metadata != nil {
				c.ignore(field+".template.metadata", "kiln makes no Job to label; pod labels go in template.spec.template.metadata")
			}
			if t := rj.Template; t != nil && t.Spec != nil && t.Spec.Template != nil {
				p.meta, p.spec = t.Spec.Template.Metadata, t.Spec.Template.Spec
				p.metaField = field + ".template.spec.template.metadata"
			}
			out = append(out, p)
		}
	}
	return out
}

// targetsTrainer reports whether p shapes the trainer's pods (node, or
// MPI's launcher, which kiln runs as the same pods). A patch of an
// initializer is ignored; one of a job no runtime of kiln's has is refused.
func (c *conversion) targetsTrainer(p podPatch) bool {
	trainer := false
	for j, name := range p.jobs {
		switch name {
		case trainerv1.JobNode, trainerv1.JobLauncher:
			trainer = true
		case trainerv1.JobDatasetInit, trainerv1.JobModelInit:
			c.ignore(p.jobField(j), "kiln runs initializers with its own fetcher, not pods shaped by the runtime")
		default:
			c.fail(apiv1.CodeUnsupported, p.jobField(j), fmt.Sprintf("job %q is not one of kiln's: node, launcher, dataset-initializer, model-initializer", name), "")
		}
	}
	return trainer
}

// metaOthers notes the fields of a patch's metadata besides its labels
// and annotations: a pod's name and namespace are kiln's.
func (c *conversion) metaOthers(p podPatch) {
	if p.meta == nil {
		return
	}
	for _, f := range p.meta.Others() {
		c.ignore(p.metaField+"."+f, "kiln names its pods and places them in its namespace; a patch adds labels and annotations")
	}
}

func addMeta(pt *apiv1.PodTemplate, m *trainerv1.PodMetadata) {
	if m == nil {
		return
	}
	pt.Metadata.Labels = mergeStrings(pt.Metadata.Labels, m.Labels)
	pt.Metadata.Annotations = mergeStrings(pt.Metadata.Annotations, m.Annotations)
}

// addSpec merges an override's pod fields into pt's spec. The trainer's
// container ("node" in Trainer's runtimes) is kiln's "main".
func (c *conversion) addSpec(pt *apiv1.PodTemplate, p podPatch) {
	o := p.spec
	if o == nil {
		return
	}
	if pt.Spec == nil {
		pt.Spec = &corev1.PodSpec{}
	}
	s := pt.Spec
	if o.ServiceAccountName != nil {
		s.ServiceAccountName = *o.ServiceAccountName
	}
	s.NodeSelector = mergeStrings(s.NodeSelector, o.NodeSelector)
	if o.Affinity != nil {
		s.Affinity = o.Affinity
	}
	if o.SecurityContext != nil {
		s.SecurityContext = o.SecurityContext
	}
	if o.TerminationGracePeriodSeconds != nil {
		s.TerminationGracePeriodSeconds = o.TerminationGracePeriodSeconds
	}
	s.Tolerations = append(s.Tolerations, o.Tolerations...)
	s.Volumes = append(s.Volumes, o.Volumes...)
	s.SchedulingGates = append(s.SchedulingGates, o.SchedulingGates...)
	s.ImagePullSecrets = append(s.ImagePullSecrets, o.ImagePullSecrets...)
	for i, co := range o.Containers {
		c.container(s, fmt.Sprintf("%s.spec.containers[%d]", p.field, i), co)
	}
	if len(o.InitContainers) > 0 {
		c.ignore(p.field+".spec.initContainers", "kiln's trainer pods have no init containers of the runtime's to patch")
	}
}

// container merges an override of the trainer's container into kiln's
// main container; the runtime's other containers are not kiln's.
func (c *conversion) container(s *corev1.PodSpec, field string, co trainerv1.ContainerOverride) {
	if co.Name != trainerv1.ContainerNode && co.Name != apiv1.MainContainer {
		c.ignore(field, fmt.Sprintf("kiln's trainer pods run one container (%q, Trainer's %q); %q is not there", apiv1.MainContainer, trainerv1.ContainerNode, co.Name))
		return
	}
	if len(co.Env) > 0 {
		c.fail(apiv1.CodeUnsupported, field+".env", "the trainer's env is set with spec.trainer.env", "move the variables to spec.trainer.env")
	}
	var main *corev1.Container
	for i := range s.Containers {
		if s.Containers[i].Name == apiv1.MainContainer {
			main = &s.Containers[i]
		}
	}
	if main == nil {
		s.Containers = append(s.Containers, corev1.Container{Name: apiv1.MainContainer})
		main = &s.Containers[len(s.Containers)-1]
	}
	main.VolumeMounts = append(main.VolumeMounts, co.VolumeMounts...)
	if co.SecurityContext != nil {
		main.SecurityContext = co.SecurityContext
	}
}
