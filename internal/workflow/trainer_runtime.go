package workflow

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	trainerv1 "kiln.dev/kiln/api/trainer/v1alpha1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runtimeFromTrainer translates a Trainer TrainingRuntime or
// ClusterTrainingRuntime into kiln's TrainingRuntime: its ML policy, its
// pod-group policy and the trainer container of its JobSet template.
func runtimeFromTrainer(doc *Document) (*Document, error) {
	in := &trainerv1.TrainingRuntime{}
	problems, ok := decodeStrict(doc, in)
	if !ok {
		return nil, joinErrs(problems)
	}
	c := &conversion{doc: doc, errs: problems}
	out := &apiv1.TrainingRuntime{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: doc.Kind},
		Metadata: apiv1.ObjectMeta{Name: c.metadata(&in.Metadata), Labels: in.Metadata.Labels, Annotations: in.Metadata.Annotations},
	}
	if doc.Kind == trainerv1.KindTrainingRuntime {
		out.Metadata.Namespace = in.Metadata.Namespace // the project; a cluster runtime has none
	}
	out.Spec.MLPolicy = c.mlPolicy(in.Spec.MLPolicy)
	out.Spec.GangPolicy = c.gangPolicy(in.Spec.PodGroupPolicy)
	out.Spec.FailurePolicy = c.jobSetFailure(in.Spec.Template.Spec.FailurePolicy)
	var nodeField string
	out.Spec.Template, out.Spec.PodTemplate, nodeField = c.jobSet(&in.Spec.Template)
	if len(c.errs) > 0 {
		return nil, joinErrs(c.errs)
	}
	return named(out.Metadata.Name)(translated(doc, doc.Kind, out, &Origin{
		Namespace: in.Metadata.Namespace, Ignored: c.ignored, Field: runtimeField(nodeField),
	}))
}

// mlPolicy converts the framework; a policy without one runs the nodes
// with no framework environment, as Trainer does.
func (c *conversion) mlPolicy(p *trainerv1.MLPolicy) *apiv1.MLPolicy {
	out := &apiv1.MLPolicy{}
	if p == nil {
		out.Plain = &apiv1.PlainPolicy{}
		return out
	}
	out.NumNodes = p.NumNodes
	var set []string
	for name, on := range map[string]bool{"torch": p.Torch != nil, "mpi": p.MPI != nil, "jax": p.JAX != nil, "xgboost": p.XGBoost != nil, "flux": p.Flux != nil} {
		if on {
			set = append(set, name)
		}
	}
	if len(set) > 1 {
		slices.Sort(set)
		c.fail(apiv1.CodeNoMLPolicy, "spec.mlPolicy", fmt.Sprintf("mlPolicy sets %s: a runtime has one framework", strings.Join(set, " and ")), "keep one of them")
		return out
	}
	switch {
	case p.Torch != nil:
		out.Torch = &apiv1.TorchPolicy{NumProcPerNode: numProcPerNode(p.Torch.NumProcPerNode)}
		c.elastic(out.Torch, p.Torch.ElasticPolicy)
		c.envInjection(p.Torch.EnvInjection)
	case p.MPI != nil:
		out.MPI = c.mpi(p.MPI)
	case p.JAX != nil:
		out.JAX = &apiv1.JAXPolicy{}
	case p.XGBoost != nil:
		out.XGBoost = &apiv1.XGBoostPolicy{}
	case p.Flux != nil:
		c.fail(apiv1.CodeUnsupported, "spec.mlPolicy.flux", "kiln has no Flux framework", "use mpi, torch, jax or xgboost")
	default:
		out.Plain = &apiv1.PlainPolicy{}
	}
	return out
}

// elastic carries Trainer v2.1's elasticPolicy over: torchrun's
// --nnodes=minNodes:maxNodes with the c10d rendezvous, and maxRestarts.
func (c *conversion) elastic(out *apiv1.TorchPolicy, e *trainerv1.TorchElasticPolicy) {
	if e == nil {
		return
	}
	out.ElasticPolicy = &apiv1.ElasticPolicy{MinNodes: e.MinNodes, MaxNodes: e.MaxNodes, MaxRestarts: e.MaxRestarts}
	if len(e.Metrics) > 0 {
		c.ignore("spec.mlPolicy.torch.elasticPolicy.metrics", "kiln grows a job when the pool has room, not by metrics (no autoscaler)")
	}
}

// envInjection is v2.3's list of the containers of a runtime's other
// jobs that get torch's PET_* variables too. kiln runs those jobs (the
// initializers) with its own fetcher, before the nodes: the nodes' own
// container is the one that gets them.
func (c *conversion) envInjection(e *trainerv1.EnvInjection) {
	if e == nil || len(e.Targets) == 0 {
		return
	}
	c.ignore("spec.mlPolicy.torch.envInjection", "kiln sets the PET_* variables in the trainer's container only; the runtime's other jobs are kiln's initializers, which run before the nodes")
}

// mpiSSHDir is where the Kubernetes backend mounts an MPI attempt's ssh
// keys (kube.SSHDir, which this package may not import).
const mpiSSHDir = "/root/.ssh"

func (c *conversion) mpi(p *trainerv1.MPIMLPolicySource) *apiv1.MPIPolicy {
	if i := p.MPIImplementation; i != nil && *i != "OpenMPI" {
		c.fail(apiv1.CodeUnsupported, "spec.mlPolicy.mpi.mpiImplementation",
			fmt.Sprintf("mpiImplementation is %q: kiln writes OpenMPI's hostfile and runs OpenMPI's mpirun", *i), "set OpenMPI, or drop the field")
	}
	if p.SSHAuthMountPath != nil && *p.SSHAuthMountPath != mpiSSHDir {
		c.ignore("spec.mlPolicy.mpi.sshAuthMountPath", "on Kubernetes kiln mounts the attempt's ssh keys at "+mpiSSHDir+" and runs /usr/sbin/sshd -De on the other nodes, as the MPI operator's root images expect; locally mpirun starts every rank on this machine, without ssh")
	}
	if p.RunLauncherAsNode != nil && !*p.RunLauncherAsNode {
		c.ignore("spec.mlPolicy.mpi.runLauncherAsNode", "kiln's launcher always runs on the first node and holds its slots (runLauncherAsNode: true)")
	}
	return &apiv1.MPIPolicy{NumProcPerNode: p.NumProcPerNode}
}

// gangPolicy keeps the gang scheduler the podGroupPolicy picks, whose
// PodGroup the kubernetes backend makes, and coscheduling's timeout,
// which kiln's own admission honours too.
func (c *conversion) gangPolicy(p *trainerv1.PodGroupPolicy) *apiv1.GangPolicy {
	switch {
	case p == nil:
		return nil
	case p.Coscheduling != nil:
		if p.Volcano != nil {
			c.ignore("spec.podGroupPolicy.volcano", "coscheduling is set too, and a gang has one scheduler: kiln makes coscheduling's PodGroup")
		}
		return &apiv1.GangPolicy{ScheduleTimeoutSeconds: p.Coscheduling.ScheduleTimeoutSeconds, Scheduler: apiv1.GangSchedulerCoscheduling}
	case p.Volcano != nil:
		if p.Volcano.NetworkTopology != nil {
			c.ignore("spec.podGroupPolicy.volcano.networkTopology", "on Kubernetes kiln makes Volcano's PodGroup with the gang's size and resources only, so Volcano places it without the network-topology limit; local processes have no PodGroup")
		}
		return &apiv1.GangPolicy{Scheduler: apiv1.GangSchedulerVolcano}
	}
	return nil
}

// jobSet reads the trainer of the runtime's template: the node job's, or
// MPI's launcher's, whose command is the job's. It returns its container
// as kiln's template, the rest of its pod as the runtime's pod template,
// and the path of the node job's container.
func (c *conversion) jobSet(t *trainerv1.JobSetTemplateSpec) (*apiv1.Trainer, *apiv1.PodTemplate, string) {
	s := &t.Spec
	for field, v := range map[string]json.RawMessage{
		"network": s.Network, "successPolicy": s.SuccessPolicy,
		"startupPolicy": s.StartupPolicy, "coordinator": s.Coordinator,
	} {
		if len(v) > 0 {
			c.ignore("spec.template.spec."+field, "kiln's gang rules decide this: docs/kubeflow.md says how")
		}
	}
	c.jobSetRest(t)
	var node, launcher *apiv1.Trainer
	var nodePod, launcherPod *apiv1.PodTemplate
	var nodeField string
	for i := range s.ReplicatedJobs {
		rj := &s.ReplicatedJobs[i]
		field := fmt.Sprintf("spec.template.spec.replicatedJobs[%d]", i)
		if rj.Replicas != nil && *rj.Replicas != 1 {
			c.fail(apiv1.CodeUnsupported, field+".replicas", "replicas is not 1: the number of nodes is mlPolicy.numNodes (or the TrainJob's trainer.numNodes)", "drop replicas")
		}
		c.replicatedJobRest(field, rj)
		switch rj.Name {
		case trainerv1.JobNode:
			node, nodePod, nodeField = c.trainerPod(field, &rj.Template.Spec.Template)
		case trainerv1.JobLauncher:
			launcher, launcherPod, _ = c.trainerPod(field, &rj.Template.Spec.Template)
		case trainerv1.JobDatasetInit, trainerv1.JobModelInit:
			c.ignore(field, "kiln runs initializers with its own fetcher; the TrainJob's spec.initializer says what to fetch")
		default:
			c.fail(apiv1.CodeUnsupported, field+".name", fmt.Sprintf("job %q is not one of kiln's: node, launcher, dataset-initializer, model-initializer", rj.Name), "")
		}
	}
	if launcher != nil {
		// MPI: the nodes wait for the launcher (sshd in Trainer's images);
		// kiln's launcher starts the ranks, running the launcher's command.
		return launcher, launcherPod, nodeField
	}
	return node, nodePod, nodeField
}

// jobSetRest notes the fields of the JobSet template that make sense for
// a JobSet object only: kiln makes none.
func (c *conversion) jobSetRest(t *trainerv1.JobSetTemplateSpec) {
	s := &t.Spec
	if t.Metadata != nil {
		c.ignore("spec.template.metadata", "kiln makes no JobSet to label; pod labels go in a job's template.spec.template.metadata")
	}
	if s.Suspend != nil {
		c.ignore("spec.template.spec.suspend", "kiln makes no JobSet to suspend: set spec.suspend on the TrainJob")
	}
	if s.TTLSecondsAfterFinished != nil {
		c.ignore("spec.template.spec.ttlSecondsAfterFinished", "kiln makes no JobSet to delete; a run's records stay until kiln delete run or the store's retention")
	}
	if s.ManagedBy != nil {
		c.ignore("spec.template.spec.managedBy", "kiln makes no JobSet: kiln itself runs the job's pods or processes")
	}
	if v := strings.TrimSpace(string(s.VolumeClaimPolicies)); v != "" && v != "null" && v != "[]" {
		c.ignore("spec.template.spec.volumeClaimPolicies", "kiln creates no claims from it: mount an existing claim with a volume (runtimePatches, or the job's pod template); locally, tasks share the run's directory")
	}
}

// replicatedJobRest notes the fields of a replicated job kiln does not
// use: it runs one pod (or process) per node in its own order.
func (c *conversion) replicatedJobRest(field string, rj *trainerv1.ReplicatedJob) {
	if rj.GroupName != "" {
		c.ignore(field+".groupName", "kiln makes no JobSet, whose pods it would label by group")
	}
	c.dependsOn(field, rj)
	if rj.Template.Labels != nil || rj.Template.Annotations != nil {
		c.ignore(field+".template.metadata", "kiln makes no Job to label; pod labels go in template.spec.template.metadata")
	}
	spec := rj.Template.Spec.DeepCopy()
	spec.Template = corev1.PodTemplateSpec{}
	js, _ := json.Marshal(spec)
	var set map[string]json.RawMessage
	_ = json.Unmarshal(js, &set)
	delete(set, "template")
	for _, name := range slices.Sorted(maps.Keys(set)) {
		c.ignore(field+".template.spec."+name, "kiln makes no Job: it runs one pod (or process) per node, and restarts the gang by the runtime's failurePolicy.maxRestarts")
	}
}

// dependsOn notes an order of the replicated jobs other than kiln's own,
// which it keeps whatever the runtime says: initializers first, then the
// nodes, then MPI's launcher once they are up.
func (c *conversion) dependsOn(field string, rj *trainerv1.ReplicatedJob) {
	if len(rj.DependsOn) == 0 {
		return
	}
	var deps []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(rj.DependsOn, &deps)
	before := map[string][]string{
		trainerv1.JobNode:     {trainerv1.JobDatasetInit, trainerv1.JobModelInit},
		trainerv1.JobLauncher: {trainerv1.JobNode, trainerv1.JobDatasetInit, trainerv1.JobModelInit},
	}[rj.Name]
	for _, d := range deps {
		if !slices.Contains(before, d.Name) {
			c.ignore(field+".dependsOn", "kiln's order is its own: initializers first, then the nodes, then MPI's launcher once they are up")
			return
		}
	}
}

// trainerPod reads the trainer's container of a job's pod template: the
// one named "node", or the only one. Its image, command, args, env and
// resources are the runtime's template; the rest of the pod (the
// container renamed to kiln's "main") is the runtime's pod template,
// which shapes Kubernetes pods.
func (c *conversion) trainerPod(field string, tmpl *corev1.PodTemplateSpec) (*apiv1.Trainer, *apiv1.PodTemplate, string) {
	pod := field + ".template.spec.template"
	spec := &tmpl.Spec
	idx := -1
	for i, ct := range spec.Containers {
		if ct.Name == trainerv1.ContainerNode || len(spec.Containers) == 1 {
			idx = i
		}
	}
	if idx < 0 {
		c.fail(apiv1.CodeRequired, pod+".spec.containers", "the job has no container named \"node\"", "name the trainer's container node, as Trainer's runtimes do")
		return nil, nil, ""
	}
	ct := spec.Containers[idx]
	cf := fmt.Sprintf("%s.spec.containers[%d]", pod, idx)
	out := &apiv1.Trainer{Image: ct.Image, Command: ct.Command, Args: ct.Args, Env: c.env(cf+".env", ct.Env), ResourcesPerNode: c.resources(cf+".resources", &ct.Resources)}
	if out.ResourcesPerNode != nil && *out.ResourcesPerNode == (apiv1.Resources{}) {
		out.ResourcesPerNode = nil
	}
	if ct.Image != "" {
		c.imageIgnored(cf + ".image")
	}
	rest := tmpl.DeepCopy()
	main := &rest.Spec.Containers[idx]
	main.Name, main.Image, main.Command, main.Args, main.Env, main.Resources = apiv1.MainContainer, "", nil, nil, nil, corev1.ResourceRequirements{}
	pt := &apiv1.PodTemplate{Metadata: apiv1.PodMetadata{Labels: rest.Labels, Annotations: rest.Annotations}, Spec: &rest.Spec}
	if sameJSON(rest.Spec, corev1.PodSpec{Containers: []corev1.Container{{Name: apiv1.MainContainer}}}) {
		pt.Spec = nil
	}
	pt = c.withLimits(pt)
	if pt.Spec == nil && len(pt.Metadata.Labels)+len(pt.Metadata.Annotations) == 0 {
		return out, nil, cf
	}
	c.podField(pod)
	return out, pt, cf
}

// runtimeField names a field of the translated runtime as the runtime
// names it; node is the path of its trainer container.
func runtimeField(node string) func(string) string {
	return func(f string) string {
		r := strings.NewReplacer(
			"spec.gangPolicy.scheduleTimeoutSeconds", "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds",
			"spec.failurePolicy.maxRestarts", "spec.template.spec.failurePolicy.maxRestarts",
			"spec.template.resourcesPerNode", node+".resources.requests",
			"spec.template.", node+".",
		)
		if node == "" {
			return f
		}
		return r.Replace(f)
	}
}

// jobSetFailure reads JobSet's failurePolicy: maxRestarts restarts the
// whole JobSet, as kiln restarts a job's gang (the job's own backoffLimit,
// when it sets one, wins); JobSet's rules by reason are not kiln's.
func (c *conversion) jobSetFailure(raw json.RawMessage) *apiv1.FailurePolicy {
	if len(raw) == 0 {
		return nil
	}
	var fp struct {
		MaxRestarts     *int32          `json:"maxRestarts"`
		RestartStrategy string          `json:"restartStrategy"`
		Rules           json.RawMessage `json:"rules"`
	}
	f := "spec.template.spec.failurePolicy"
	if err := json.Unmarshal(raw, &fp); err != nil {
		c.fail(apiv1.CodeParse, f, "is not a JobSet failure policy: "+err.Error(), "")
		return nil
	}
	if len(fp.Rules) > 0 {
		c.ignore(f+".rules", "kiln restarts a failed gang whole, up to maxRestarts; it has no rules by failure reason")
	}
	if fp.RestartStrategy != "" && fp.RestartStrategy != "Recreate" {
		c.ignore(f+".restartStrategy", "kiln restarts a failed gang by recreating all of it (JobSet's Recreate)")
	}
	if fp.MaxRestarts == nil {
		return nil
	}
	return &apiv1.FailurePolicy{MaxRestarts: fp.MaxRestarts}
}
