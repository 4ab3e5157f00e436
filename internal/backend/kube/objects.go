package kube

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// Where kiln's own volumes appear in every container.
const (
	// KilnDir holds the attempt's files (an MPI hostfile).
	KilnDir = "/kiln"
	// OutputsDir is $KILN_OUTPUTS: an emptyDir per pod.
	OutputsDir = "/kiln/outputs"
	// GPUResource is the resource name GPUs are asked for by.
	GPUResource = "nvidia.com/gpu"
)

// Gang schedulers kiln can create PodGroups for.
const (
	GangNone         = ""
	GangCoscheduling = "coscheduling"
	GangVolcano      = "volcano"
)

// objects is everything one attempt creates in the cluster.
type objects struct {
	Pods []*corev1.Pod
	// Service is the headless Service that names a gang's pods; nil for a
	// single task.
	Service *corev1.Service
	// Files holds spec.Files, mounted into every container; nil without files.
	Files *corev1.ConfigMap
	// PodGroup is the gang scheduler's PodGroup; nil without one.
	PodGroup *unstructured.Unstructured
	// Secret holds the values of spec.SecretEnv, which containers take
	// by reference: they never appear in the pod spec. Nil without any.
	Secret *corev1.Secret
}

// shape is what, beyond the spec, decides the objects.
type shape struct {
	Namespace     string
	GangScheduler string
	SchedulerName string
	KilnImage     string
}

// isGang reports whether spec is a training job's gang rather than one
// task's process: gangs get a Service, stable host names and a PodGroup.
func isGang(spec *job.Spec) bool {
	return len(spec.Processes) > 1 || (len(spec.Processes) == 1 && spec.Processes[0].Name != "")
}

// containerName is the container a process runs in.
func containerName(p job.Process) string {
	if p.Name == "" {
		return apiv1.MainContainer
	}
	return p.Name
}

// hosts returns the distinct host indexes of spec's processes, in order.
func hosts(spec *job.Spec) []int {
	var hs []int
	for _, p := range spec.Processes {
		if !slices.Contains(hs, p.Host) {
			hs = append(hs, p.Host)
		}
	}
	sort.Ints(hs)
	return hs
}

// build returns the objects of one attempt. It is deterministic: the same
// spec gives the same objects, so a repeated launch creates nothing new.
func build(spec *job.Spec, sh shape) (*objects, error) {
	a := names(spec.ID)
	tmpl := &apiv1.PodTemplate{}
	if len(spec.Container.PodTemplate) > 0 {
		if err := json.Unmarshal(spec.Container.PodTemplate, tmpl); err != nil {
			return nil, fmt.Errorf("reading the pod template: %w", err)
		}
	}
	if spec.Store != nil && sh.KilnImage == "" {
		return nil, &apiv1.Error{
			Code: apiv1.CodeArtifactConfig, Field: "kubernetes.kilnImage",
			Message: "pods fetch and store their artifacts in artifacts.s3 with kiln itself: set kubernetes.kilnImage (or --kiln-image) to an image that holds kiln",
		}
	}
	if err := entrypointWrapped(spec); err != nil {
		return nil, err
	}
	gang := isGang(spec)
	plan := planGang(spec, sh)
	out := &objects{}
	if gang {
		out.Service = service(a, sh)
	}
	if len(spec.Files) > 0 {
		out.Files = &corev1.ConfigMap{ObjectMeta: meta(a, a.Base+"-files", sh), Data: spec.Files}
	}
	if gang && plan.Kind != GangNone {
		out.PodGroup = podGroup(a, spec, sh, plan)
	}
	if len(spec.SecretEnv) > 0 {
		out.Secret = secret(a, spec, sh)
	}
	for _, h := range hosts(spec) {
		out.Pods = append(out.Pods, pod(a, spec, tmpl, sh, h, gang, plan))
	}
	return out, nil
}

// MPIHostfile is where an MPI job's hostfile is mounted besides kiln's
// own place: the MPI operator and Trainer v2 mount theirs there, and
// mpirun --hostfile /etc/mpi/hostfile is how their users write it.
const MPIHostfile = "/etc/mpi/hostfile"

// entrypointWrapped refuses an attempt of which a process runs its
// image's entrypoint (no command) while the attempt needs its command
// wrapped: to collect output parameters or artifacts, or to fetch and
// store artifacts with kiln artifact-exec.
func entrypointWrapped(spec *job.Spec) error {
	if len(spec.Outputs)+len(spec.Artifacts) == 0 && spec.Store == nil {
		return nil
	}
	for _, p := range spec.Processes {
		if len(p.Command) == 0 {
			return &apiv1.Error{
				Code: apiv1.CodeEntrypointWrapped, Field: "command",
				Message: fmt.Sprintf("process %s runs its image's entrypoint, which kiln cannot wrap to collect its outputs or move its artifacts", cmp.Or(p.Name, spec.ID.Node)),
				Hint:    "write the command the image's ENTRYPOINT runs, or drop the task's outputs and artifacts",
			}
		}
	}
	return nil
}

func meta(a attempt, name string, sh shape) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: sh.Namespace, Labels: a.labels(),
		Annotations: map[string]string{AnnoAttemptID: a.ID.String()},
	}
}

// service is a gang's headless Service: every pod gets the DNS name
// <pod>.<service>, published before the pod is ready, since ranks look each
// other up while they start.
func service(a attempt, sh shape) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta(a, a.Base, sh),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{LabelJob: a.Base},
			PublishNotReadyAddresses: true,
		},
	}
}

// pod builds the pod of host h: one container per process placed there.
func pod(a attempt, spec *job.Spec, tmpl *apiv1.PodTemplate, sh shape, h int, gang bool, plan gangPlan) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: meta(a, a.podName(h, gang), sh)}
	p.Labels = merged(tmpl.Metadata.Labels, p.Labels)
	p.Labels[LabelHost] = strconv.Itoa(h)
	p.Annotations = merged(tmpl.Metadata.Annotations, p.Annotations)
	if tmpl.Spec != nil {
		p.Spec = *tmpl.Spec.DeepCopy()
	}
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	base, sidecars := splitMain(p.Spec.Containers)
	p.Spec.Containers = nil
	var procs []job.Process
	for _, proc := range spec.Processes {
		if proc.Host == h {
			procs = append(procs, proc)
		}
	}
	for i, share := range shares(spec.Container, len(procs)) {
		p.Spec.Containers = append(p.Spec.Containers, container(spec, procs[i], base, share))
	}
	if hasWorkers(spec) {
		mountSSH(p, a, len(procs))
	}
	mountWorkspace(p, spec, a, len(p.Spec.Containers))
	storeArtifacts(p, spec, sh.KilnImage)
	p.Spec.Containers = append(p.Spec.Containers, sidecars...)
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{
		Name: "kiln-outputs", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}},
	})
	if len(spec.Files) > 0 {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "kiln-files", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: a.Base + "-files"}},
		}})
	}
	if gang {
		p.Spec.Hostname, p.Spec.Subdomain = p.Name, a.Base
	}
	switch plan.Kind {
	case GangCoscheduling:
		p.Labels["scheduling.x-k8s.io/pod-group"] = a.Base
	case GangVolcano:
		p.Annotations["scheduling.k8s.io/group-name"] = a.Base
	}
	if gang && plan.SchedulerName != "" && p.Spec.SchedulerName == "" {
		p.Spec.SchedulerName = plan.SchedulerName
	}
	return p
}

// splitMain separates the template's "main" container, which every
// process's container starts from, from the sidecars it keeps as they are.
func splitMain(cs []corev1.Container) (corev1.Container, []corev1.Container) {
	var base corev1.Container
	var rest []corev1.Container
	for _, c := range cs {
		if c.Name == apiv1.MainContainer {
			base = c
			continue
		}
		rest = append(rest, c)
	}
	return base, rest
}

// container is one process's container: the template's main container
// with kiln's image, command, environment and mounts, and share, its part
// of the pod's resources (see shares).
func container(spec *job.Spec, proc job.Process, base corev1.Container, share job.Container) corev1.Container {
	c := *base.DeepCopy()
	c.Name = containerName(proc)
	if spec.Container.Image != "" {
		c.Image = spec.Container.Image
	}
	c.Command, c.Args = proc.Command, nil
	if len(proc.Command) == 0 { // the image's entrypoint, which nothing wraps (build refuses outputs)
		c.Command, c.Args = nil, proc.Args
	}
	if len(proc.Command) > 0 && (len(spec.Outputs) > 0 || len(spec.Artifacts) > 0) {
		path := c.TerminationMessagePath
		if path == "" {
			path = corev1.TerminationMessagePathDefault
		}
		c.Command = outputsWrapper(proc.Command, spec.Outputs, spec.Artifacts, path)
	}
	if spec.Container.WorkingDir != "" {
		c.WorkingDir = spec.Container.WorkingDir
	}
	env := c.Env
	c.Env = nil
	for _, kv := range proc.Env {
		k, v, _ := strings.Cut(kv, "=")
		if slices.Contains(spec.SecretEnv, k) {
			ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secretName(spec)}, Key: k}
			c.Env = append(c.Env, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ref}})
			continue
		}
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: v})
	}
	c.Env = append(c.Env, corev1.EnvVar{Name: "KILN_OUTPUTS", Value: OutputsDir})
	c.Env = append(c.Env, noGPUs(spec.Container, share)...)
	c.Env = append(env, c.Env...) // kiln's come last and win
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "kiln-outputs", MountPath: OutputsDir})
	for _, name := range sortedKeys(spec.Files) {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "kiln-files", MountPath: path.Join(KilnDir, name), SubPath: name})
		if name == HostfileName { // where the MPI operator and Trainer mount it, and programs name it
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "kiln-files", MountPath: MPIHostfile, SubPath: name, ReadOnly: true})
		}
	}
	c.Resources = resources(share, c.Resources)
	return c
}

// resources turns what a node asks of the pool into requests and limits:
// memory and GPUs are limited to what is asked, CPU is not (a process may
// burst into idle cores, as it may locally).
func resources(ct job.Container, r corev1.ResourceRequirements) corev1.ResourceRequirements {
	set := func(l *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
		if *l == nil {
			*l = corev1.ResourceList{}
		}
		if _, ok := (*l)[name]; !ok {
			(*l)[name] = q
		}
	}
	if ct.MilliCPU > 0 {
		set(&r.Requests, corev1.ResourceCPU, *resource.NewMilliQuantity(ct.MilliCPU, resource.DecimalSI))
	}
	if ct.Memory > 0 {
		q := *resource.NewQuantity(ct.Memory, resource.BinarySI)
		set(&r.Requests, corev1.ResourceMemory, q)
		set(&r.Limits, corev1.ResourceMemory, q)
	}
	if ct.GPU > 0 {
		q := *resource.NewQuantity(ct.GPU, resource.DecimalSI)
		set(&r.Requests, GPUResource, q)
		set(&r.Limits, GPUResource, q)
	}
	return r
}

// podGroup is the gang scheduler's PodGroup: schedule all pods or none.
func podGroup(a attempt, spec *job.Spec, sh shape, plan gangPlan) *unstructured.Unstructured {
	apiVersion := "scheduling.x-k8s.io/v1alpha1"
	if plan.Kind == GangVolcano {
		apiVersion = "scheduling.volcano.sh/v1beta1"
	}
	n := int64(plan.MinMember)
	min := map[string]any{}
	ct := spec.Container
	if ct.MilliCPU > 0 {
		min["cpu"] = resource.NewMilliQuantity(ct.MilliCPU*n, resource.DecimalSI).String()
	}
	if ct.Memory > 0 {
		min["memory"] = resource.NewQuantity(ct.Memory*n, resource.BinarySI).String()
	}
	if ct.GPU > 0 {
		min[GPUResource] = strconv.FormatInt(ct.GPU*n, 10)
	}
	groupSpec := map[string]any{"minMember": n, "minResources": min}
	if plan.Kind == GangCoscheduling && plan.Timeout > 0 {
		groupSpec["scheduleTimeoutSeconds"] = int64(plan.Timeout.Seconds())
	}
	m := meta(a, a.Base, sh)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": "PodGroup", "spec": groupSpec,
	}}
	u.SetName(m.Name)
	u.SetNamespace(m.Namespace)
	u.SetLabels(m.Labels)
	u.SetAnnotations(m.Annotations)
	return u
}

// secretName is the Secret holding an attempt's secret environment.
func secretName(spec *job.Spec) string { return names(spec.ID).Base + "-env" }

// secret collects the secret variables' values from the processes' env.
func secret(a attempt, spec *job.Spec, sh shape) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: meta(a, secretName(spec), sh), StringData: map[string]string{}}
	for _, p := range spec.Processes {
		for _, kv := range p.Env {
			if k, v, _ := strings.Cut(kv, "="); slices.Contains(spec.SecretEnv, k) {
				s.StringData[k] = v
			}
		}
	}
	return s
}

func merged(user, ours map[string]string) map[string]string {
	out := make(map[string]string, len(user)+len(ours))
	for k, v := range user {
		out[k] = v
	}
	for k, v := range ours {
		out[k] = v
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
