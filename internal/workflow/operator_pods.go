package workflow

import (
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	kubeflowv1 "kiln.dev/kiln/api/kubeflow/v1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/training"
)

// mainIndex is the index of the container the kind configures in group
// t's pod: the one named as the kind names it, or the first. Another
// container beside it is refused: kiln's nodes run the trainer alone.
func (o *opJob) mainIndex(t kubeflowv1.ReplicaType, name string) int {
	r, ok := o.replicas[t]
	if !ok {
		return -1
	}
	pod := o.field(t) + ".template.spec.containers"
	cs := r.spec.Template.Spec.Containers
	idx := 0
	if name != "" {
		idx = -1
		for i := range cs {
			if cs[i].Name == name {
				idx = i
			}
		}
	}
	switch {
	case len(cs) == 0 || idx < 0:
		o.c.fail(apiv1.CodeMainContainer, pod, fmt.Sprintf("the %s pod has no container named %q, which a %s runs", t, name, o.kind), "name the trainer's container "+name)
		return -1
	case len(cs) > 1:
		o.c.fail(apiv1.CodeMainContainer, fmt.Sprintf("%s[%d]", pod, 1-min(idx, 1)),
			fmt.Sprintf("the %s pod has %d containers: kiln runs the trainer's container (%s) alone", t, len(cs), cs[idx].Name), "drop the other containers")
		return -1
	}
	return idx
}

// trainer reads the trainer (image, command, args, env, resources) from
// the main container of group t, and the rest of its pod as the job's pod
// template; containerField and podField then name where they are written.
func (o *opJob) trainer(t kubeflowv1.ReplicaType) *apiv1.Trainer {
	tr, idx := o.readContainer(t)
	if idx < 0 {
		return tr
	}
	if tr.Image != "" {
		o.c.imageIgnored(o.containerField + ".image")
	}
	o.job.Spec.PodTemplate = o.podTemplate(&o.replicas[t].spec.Template, idx)
	return tr
}

// readContainer reads the main container of group t as a trainer, and
// its index (-1: there is none).
func (o *opJob) readContainer(t kubeflowv1.ReplicaType) (*apiv1.Trainer, int) {
	idx := o.mainIndex(t, o.container)
	if idx < 0 {
		return &apiv1.Trainer{}, idx
	}
	c := o.c
	ct := o.replicas[t].spec.Template.Spec.Containers[idx]
	cf := fmt.Sprintf("%s.template.spec.containers[%d]", o.field(t), idx)
	o.containerField, o.podField = cf, o.field(t)+".template"
	tr := &apiv1.Trainer{
		Image: ct.Image, Command: ct.Command, Args: ct.Args,
		Env: c.env(cf+".env", ct.Env), ResourcesPerNode: c.resources(cf+".resources", &ct.Resources),
	}
	if tr.ResourcesPerNode != nil && *tr.ResourcesPerNode == (apiv1.Resources{}) {
		tr.ResourcesPerNode = nil
	}
	if len(ct.Ports) > 0 {
		c.ignore(cf+".ports", "kiln picks the ports the replicas meet on; the variables it sets (MASTER_PORT, TF_CONFIG...) say which")
	}
	return tr, idx
}

// podTemplate is a replica's pod as kiln's pod template: the main
// container keeps what kiln does not set itself (volume mounts, security
// context), the pod everything but its restart policy, which kiln's gang
// rules replace. Pod fields shape Kubernetes pods only.
func (o *opJob) podTemplate(tmpl *kubeflowv1.PodTemplateSpec, idx int) *apiv1.PodTemplate {
	spec := podRest(&tmpl.Spec, idx)
	pt := &apiv1.PodTemplate{}
	if m := tmpl.Metadata; m != nil {
		pt.Metadata = apiv1.PodMetadata{Labels: m.Labels, Annotations: m.Annotations}
	}
	if js, _ := json.Marshal(spec); string(js) != `{"containers":[{"name":"main","resources":{}}]}` {
		pt.Spec = spec
	}
	if pt.Spec == nil && len(pt.Metadata.Labels)+len(pt.Metadata.Annotations) == 0 {
		return nil
	}
	o.c.podField(o.podField)
	return pt
}

// podRest is a pod spec without what kiln sets itself: the main
// container's image, command, args, env, resources and ports, and the
// pod's restart policy. The main container is renamed kiln's "main".
func podRest(spec *corev1.PodSpec, idx int) *corev1.PodSpec {
	out := spec.DeepCopy()
	out.RestartPolicy = ""
	ct := &out.Containers[idx]
	ct.Name, ct.Image, ct.Command, ct.Args, ct.Env, ct.Ports = apiv1.MainContainer, "", nil, nil, nil, nil
	ct.Resources = corev1.ResourceRequirements{}
	return out
}

// same refuses a group u whose image, resources or pod differ from
// group t's, the trainer's: kiln runs every node from one image and one
// pod template. Its command, args and env may differ, as the operator
// lets each replica type write its own: they become u's override
// (mlPolicy.trainingOperator.replicas).
func (o *opJob) same(t, u kubeflowv1.ReplicaType) {
	if !o.has(t) || !o.has(u) {
		return
	}
	i, j := o.mainIndex(t, o.container), o.mainIndex(u, o.container)
	if i < 0 || j < 0 {
		return
	}
	a, b := &o.replicas[t].spec.Template, &o.replicas[u].spec.Template
	ca, cb := a.Spec.Containers[i], b.Spec.Containers[j]
	cf := fmt.Sprintf("%s.template.spec.containers[%d]", o.field(u), j)
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"image", ca.Image, cb.Image},
		{"resources", ca.Resources, cb.Resources},
	} {
		if !sameJSON(f.x, f.y) {
			o.c.fail(apiv1.CodeReplicasDiffer, cf+"."+f.name, fmt.Sprintf("%s differs from the %s's: kiln runs every node with one trainer", f.name, t), "write the same "+f.name+" in both")
		}
	}
	if !sameJSON(podRest(&a.Spec, i), podRest(&b.Spec, j)) || !sameJSON(a.Metadata, b.Metadata) {
		o.c.fail(apiv1.CodeReplicasDiffer, o.field(u)+".template", fmt.Sprintf("the pod differs from the %s's (besides its container's command, args, env and ports, and restartPolicy): kiln runs every node from one pod template", t), "write the same pod in both")
	}
	o.override(t, u, &ca, &cb, cf)
}

// override records what group u's container runs differently from group
// t's, the trainer's: its command and args, and its env, each written
// whole. cf is where u's container is written.
func (o *opJob) override(t, u kubeflowv1.ReplicaType, ca, cb *corev1.Container, cf string) {
	r := o.overrides[string(u)]
	if !sameJSON(ca.Command, cb.Command) || !sameJSON(ca.Args, cb.Args) {
		if len(cb.Command)+len(cb.Args) == 0 {
			o.c.fail(apiv1.CodeReplicasDiffer, cf+".args", fmt.Sprintf("the %s has no command or args where the %s has: kiln runs a replica type's own only when it writes some", u, t),
				"write the command (or args) the "+string(u)+" runs")
		}
		r.Command, r.Args = cb.Command, cb.Args
	}
	if !sameJSON(ca.Env, cb.Env) {
		if len(cb.Env) == 0 {
			o.c.fail(apiv1.CodeReplicasDiffer, cf+".env", fmt.Sprintf("the %s has no env where the %s has: kiln runs a replica type's own env only when it writes some", u, t),
				"write the env the "+string(u)+" runs with")
		}
		r.Env = o.c.env(cf+".env", cb.Env)
	}
	o.setOverride(u, r, cf)
}

// setOverride keeps r as group u's override unless it is empty; cf is
// where u's container is written, which errors of r name.
func (o *opJob) setOverride(u kubeflowv1.ReplicaType, r apiv1.OperatorReplica, cf string) {
	if sameJSON(r, apiv1.OperatorReplica{}) {
		return
	}
	if o.overrides == nil {
		o.overrides = map[string]apiv1.OperatorReplica{}
	}
	o.overrides[string(u)] = r
	if cf != "" {
		o.overrideFields[string(u)] = cf
	}
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// restartPolicies carries each replica group's restartPolicy over to
// the kiln group its processes run in: Master, Chief and Worker are
// "node", Launcher "launcher", PS "ps". Not written, it is the kind's
// default. The first type of a kiln group (the leader's, in the order
// Chief, Master, Worker) gives the group's policy; a type of the group
// that writes another keeps its own as its override, which decides for
// the failures of its processes.
func (o *opJob) restartPolicies(kindDefault kubeflowv1.RestartPolicy) {
	byGroup := map[string]kubeflowv1.RestartPolicy{}
	for _, t := range sortedTypes(o.replicas) {
		p := o.replicas[t].spec.RestartPolicy
		if p == "" {
			p = kindDefault
		}
		g := gangGroup(t)
		if was, seen := byGroup[g]; seen && was != p {
			r := o.overrides[string(t)]
			r.RestartPolicy = apiv1.RestartPolicy(p)
			o.setOverride(t, r, "")
			continue
		}
		byGroup[g] = p
	}
	for g, p := range byGroup {
		if g == training.GroupNode {
			o.jobPolicy.RestartPolicy = apiv1.RestartPolicy(p)
			continue
		}
		if o.jobPolicy.Groups == nil {
			o.jobPolicy.Groups = map[string]apiv1.GroupPolicy{}
		}
		o.jobPolicy.Groups[g] = apiv1.GroupPolicy{RestartPolicy: apiv1.RestartPolicy(p)}
	}
}

// gangGroup is the replica group of kiln's gang a replica type runs in.
func gangGroup(t kubeflowv1.ReplicaType) string {
	switch t {
	case kubeflowv1.ReplicaLauncher:
		return training.GroupLauncher
	case kubeflowv1.ReplicaPS:
		return training.GroupPS
	}
	return training.GroupNode
}

func sortedTypes(m map[kubeflowv1.ReplicaType]replica) []kubeflowv1.ReplicaType {
	out := make([]kubeflowv1.ReplicaType, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
