package workflow

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	trainerv1 "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Backend names, as the ignored fields name them.
const (
	backendLocal = "local"
	backendKube  = "kubernetes"
	backendSlurm = "slurm"
)

// trainerGroup reads Kubeflow Trainer v2's documents.
func trainerGroup() translator {
	return translator{apiVersion: trainerv1.APIVersion, kinds: map[string]translateFunc{
		trainerv1.KindTrainJob:               one(trainJobFromTrainer),
		trainerv1.KindTrainingRuntime:        one(runtimeFromTrainer),
		trainerv1.KindClusterTrainingRuntime: one(runtimeFromTrainer),
	}}
}

// conversion collects what translating one document found: problems,
// which always name the field as written, and ignored fields.
type conversion struct {
	doc     *Document
	errs    []error
	ignored []Ignored
	// limits are the trainer's limits that differ from its requests:
	// kept in its pod template, for Kubernetes.
	limits corev1.ResourceList
}

// withLimits adds c's limits to the main container of pt (nil: a new
// template), returning it; pt unchanged when there are none.
func (c *conversion) withLimits(pt *apiv1.PodTemplate) *apiv1.PodTemplate {
	if len(c.limits) == 0 {
		return pt
	}
	if pt == nil {
		pt = &apiv1.PodTemplate{}
	}
	if pt.Spec == nil {
		pt.Spec = &corev1.PodSpec{}
	}
	i := slices.IndexFunc(pt.Spec.Containers, func(ct corev1.Container) bool { return ct.Name == apiv1.MainContainer })
	if i < 0 {
		pt.Spec.Containers = append(pt.Spec.Containers, corev1.Container{Name: apiv1.MainContainer})
		i = len(pt.Spec.Containers) - 1
	}
	ct := &pt.Spec.Containers[i]
	if ct.Resources.Limits == nil {
		ct.Resources.Limits = corev1.ResourceList{}
	}
	for name, q := range c.limits {
		ct.Resources.Limits[name] = q
	}
	c.limits = nil
	return pt
}

func (c *conversion) fail(code apiv1.Code, field, msg, hint string) {
	e := docError(c.doc, code, field, msg)
	e.Hint = hint
	c.errs = append(c.errs, e)
}

func (c *conversion) ignore(field, reason string, backends ...string) {
	c.ignored = append(c.ignored, Ignored{Field: field, Backends: backends, Reason: reason})
}

// note names a field kiln honours its own way on backends (none: every
// backend), reason saying how.
func (c *conversion) note(field, reason string, backends ...string) {
	c.ignored = append(c.ignored, Ignored{Field: field, Backends: backends, Reason: reason, Note: true})
}

// podField marks a field the backends without pods ignore: it shapes pods.
func (c *conversion) podField(field string) {
	c.ignore(field, "it shapes Kubernetes pods; local processes have none", backendLocal)
	c.ignore(field, "it shapes Kubernetes pods; Slurm jobs have none", backendSlurm)
}

// imageIgnored marks field, a container's image, as ignored by the
// backends whose processes run without images.
func (c *conversion) imageIgnored(field string) {
	c.ignore(field, "the command runs on this machine, not in the image", backendLocal)
	c.ignore(field, "the command runs on the cluster's nodes, not in the image", backendSlurm)
}

// env converts Kubernetes environment variables: a value, or a
// secretKeyRef {name: N, key: K}, read from the kiln secret N.K of the
// run's project. Other sources cannot be honoured.
func (c *conversion) env(field string, in []corev1.EnvVar) []apiv1.EnvVar {
	var out []apiv1.EnvVar
	for i, e := range in {
		f := fmt.Sprintf("%s[%d].valueFrom", field, i)
		switch vf := e.ValueFrom; {
		case vf == nil:
			out = append(out, apiv1.EnvVar{Name: e.Name, Value: e.Value})
		case vf.SecretKeyRef != nil:
			out = append(out, apiv1.EnvVar{Name: e.Name, ValueFrom: &apiv1.EnvSource{Secret: vf.SecretKeyRef.Name + "." + vf.SecretKeyRef.Key}})
		default:
			c.fail(apiv1.CodeUnsupported, f, "kiln reads a variable's value, or a secretKeyRef (from the kiln secret NAME.KEY); not a configMap, field or resource reference",
				"set value, or store the value with kiln secret set NAME.KEY and use secretKeyRef")
		}
	}
	return out
}

// resources converts a node's requests (limits where a request is not
// written, as Kubernetes defaults them) to kiln's cpu, memory and gpu.
// kiln sizes a node by one amount of each: a limit other than its
// request, and a resource kiln does not count, are noted, not kept.
func (c *conversion) resources(field string, r *corev1.ResourceRequirements) *apiv1.Resources {
	if r == nil {
		return nil
	}
	out := &apiv1.Resources{}
	use := func(where string, name corev1.ResourceName, q resource.Quantity) {
		switch name {
		case corev1.ResourceCPU:
			out.CPU = apiv1.Quantity(q.String())
		case corev1.ResourceMemory:
			out.Memory = apiv1.Quantity(q.String())
		case "nvidia.com/gpu", "amd.com/gpu":
			out.GPU = apiv1.Quantity(q.String())
		default:
			c.ignore(field+"."+where+"."+string(name), "kiln sizes nodes by cpu, memory and GPUs (nvidia.com/gpu, amd.com/gpu) only")
		}
	}
	for _, name := range sortedNames(r.Requests) {
		use("requests", name, r.Requests[name])
	}
	for _, name := range sortedNames(r.Limits) {
		req, requested := r.Requests[name]
		switch {
		case !requested:
			use("limits", name, r.Limits[name])
		case req.Cmp(r.Limits[name]) != 0:
			// Kept as the pod's own limit, which kiln's requests do not replace.
			if c.limits == nil {
				c.limits = corev1.ResourceList{}
			}
			c.limits[name] = r.Limits[name]
			c.ignore(field+".limits."+string(name), "a limit above the request bounds a pod; local processes are not limited", backendLocal)
			c.ignore(field+".limits."+string(name), "a limit above the request bounds a pod; Slurm allocates the request", backendSlurm)
		}
	}
	return out
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// numProcPerNode converts Trainer's number-or-name to kiln's quantity.
func numProcPerNode(v *intstr.IntOrString) *apiv1.Quantity {
	if v == nil {
		return nil
	}
	q := apiv1.Quantity(v.String())
	return &q
}

// trainJobFromTrainer translates a Trainer TrainJob into kiln's.
func trainJobFromTrainer(doc *Document) (*Document, error) {
	in := &trainerv1.TrainJob{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	c := &conversion{doc: doc, errs: problems}
	out := &apiv1.TrainJob{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindTrainJob},
		Metadata: apiv1.ObjectMeta{Name: c.metadata(&in.Metadata), Namespace: in.Metadata.Namespace, Labels: in.Metadata.Labels, Annotations: in.Metadata.Annotations},
	}
	s := &in.Spec
	out.Spec.RuntimeRef = c.runtimeRef(&s.RuntimeRef)
	out.Spec.Trainer = c.trainer(s.Trainer)
	out.Spec.Suspend = c.suspend(s.Suspend, in.Metadata.Labels)
	if s.ActiveDeadlineSeconds != nil {
		out.Spec.RunPolicy = &apiv1.RunPolicy{ActiveDeadlineSeconds: s.ActiveDeadlineSeconds}
	}
	c.managedBy(s.ManagedBy)
	c.initializer(out, s.Initializer)
	out.Spec.PodTemplate = c.withLimits(c.podTemplate(s))
	if st := strings.TrimSpace(string(in.Status)); st != "" && st != "null" && st != "{}" {
		c.ignore("status", "status is kiln's to write: the run records its own (kiln get trainjob shows it in Trainer's shape)")
	}
	if len(c.errs) > 0 {
		return nil, joinErrs(c.errs)
	}
	return named(out.Metadata.Name)(translated(doc, apiv1.KindTrainJob, out, &Origin{Namespace: in.Metadata.Namespace, Field: trainJobField, Ignored: c.ignored}))
}

// metadata returns the name of a document of Trainer's (its generateName
// without the trailing "-" when it has none), noting the fields an API
// server wrote, which kiln does not use.
func (c *conversion) metadata(m *trainerv1.ObjectMeta) string {
	for _, f := range m.Set() {
		c.ignore("metadata."+f, "an API server writes it; kiln keeps its own record of what it stores and runs")
	}
	if m.Name != "" {
		if m.GenerateName != "" {
			c.ignore("metadata.generateName", "metadata.name is set, and names it")
		}
		return m.Name
	}
	if m.GenerateName == "" {
		c.fail(apiv1.CodeRequired, "metadata.name", "the document has no name", "set metadata.name (or generateName)")
	}
	return strings.TrimRight(m.GenerateName, "-")
}

// named sets the name of a translated document: its metadata's, which is
// generateName's when it had no name.
func named(name string) func(*Document, error) (*Document, error) {
	return func(d *Document, err error) (*Document, error) {
		if d != nil && d.Name == "" {
			d.Name = name
		}
		return d, err
	}
}

// suspend is a TrainJob's spec.suspend as kiln's: a run held for kiln
// resume. With Kueue's queue label, suspend is Kueue's instead: Kueue
// admits the job by unsuspending it, so kiln does not hold the run; the
// label stays on the job for the Kubernetes backend to hand it to Kueue
// (the local backend's note on the label itself is the compiler's).
func (c *conversion) suspend(s *bool, labels map[string]string) *bool {
	if labels[apiv1.LabelKueueQueue] == "" || s == nil || !*s {
		return s
	}
	c.ignore("spec.suspend", "with the label "+apiv1.LabelKueueQueue+", suspend is Kueue's (Kueue admits the job by unsuspending it), not kiln's: the run is not held for kiln resume, and with no Kueue here it starts at once", backendLocal, backendSlurm)
	return nil
}

// runtimeRef carries kind and apiGroup over as written: kiln checks them
// as it checks its own. Without a kind kiln looks the name up in every
// kind (the files first), where Trainer defaults to ClusterTrainingRuntime:
// a built-in or stored cluster runtime is found either way.
func (c *conversion) runtimeRef(r *trainerv1.RuntimeRef) apiv1.RuntimeRef {
	out := apiv1.RuntimeRef{Name: r.Name}
	if r.Kind != nil {
		out.Kind = *r.Kind
	}
	if r.APIGroup != nil {
		out.APIGroup = *r.APIGroup
	}
	return out
}

func (c *conversion) trainer(t *trainerv1.Trainer) *apiv1.Trainer {
	if t == nil {
		return nil
	}
	out := &apiv1.Trainer{
		Command: t.Command, Args: t.Args, Env: c.env("spec.trainer.env", t.Env),
		NumNodes: t.NumNodes, NumProcPerNode: numProcPerNode(t.NumProcPerNode),
		ResourcesPerNode: c.resources("spec.trainer.resourcesPerNode", t.ResourcesPerNode),
	}
	if t.Image != nil {
		out.Image = *t.Image
		c.imageIgnored("spec.trainer.image")
	}
	return out
}

// managedBy accepts Trainer's own controller: kiln is it. A job meant for
// another manager (MultiKueue) would never run here.
func (c *conversion) managedBy(m *string) {
	if m != nil && *m != "" && *m != trainerv1.ManagedByTrainer {
		hint := "drop managedBy: kiln admits the job with its own queue"
		if *m == trainerv1.ManagedByMultiKueue {
			hint = "MultiKueue dispatches jobs to other clusters, which kiln does not do: drop managedBy to have kiln run the job here"
		}
		c.fail(apiv1.CodeUnsupported, "spec.managedBy",
			fmt.Sprintf("managedBy is %q: kiln runs the jobs it manages itself (%s)", *m, trainerv1.ManagedByTrainer), hint)
	}
}

// initializer converts Trainer's dataset and model initializers; kiln
// fetches their storageUri itself, before the trainer starts.
func (c *conversion) initializer(out *apiv1.TrainJob, in *trainerv1.Initializer) {
	if in == nil {
		return
	}
	out.Spec.Initializer = &apiv1.Initializer{
		Dataset: c.initSource("spec.initializer.dataset", in.Dataset),
		Model:   c.initSource("spec.initializer.model", in.Model),
	}
}

func (c *conversion) initSource(field string, in *trainerv1.InitializerSource) *apiv1.SourceInitializer {
	if in == nil {
		return nil
	}
	out := &apiv1.SourceInitializer{StorageURI: in.StorageUri, Env: c.env(field+".env", in.Env)}
	if in.SecretRef != nil {
		out.SecretRef = &apiv1.LocalObjectReference{Name: in.SecretRef.Name}
	}
	return out
}

// trainJobField names a field of the translated TrainJob as Trainer's
// TrainJob names it.
func trainJobField(f string) string {
	r := strings.NewReplacer(
		"spec.runPolicy.activeDeadlineSeconds", "spec.activeDeadlineSeconds",
		"spec.podTemplate", "spec.podTemplateOverrides",
		"spec.trainer.resourcesPerNode.cpu", "spec.trainer.resourcesPerNode.requests.cpu",
		"spec.trainer.resourcesPerNode.memory", "spec.trainer.resourcesPerNode.requests.memory",
		"spec.trainer.resourcesPerNode.gpu", "spec.trainer.resourcesPerNode.requests[nvidia.com/gpu]",
		".valueFrom.secret", ".valueFrom.secretKeyRef",
	)
	return r.Replace(f)
}
