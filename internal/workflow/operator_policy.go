package workflow

import (
	"fmt"

	kubeflowv1 "kiln.dev/kiln/api/kubeflow/v1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runPolicy reads the job's runPolicy: restarts, deadline and TTL map to
// the TrainJob's own, suspend to its spec.suspend, schedulingPolicy's
// timeout to the runtime's gang policy. replicas is the job's total.
func (o *opJob) runPolicy(rp *kubeflowv1.RunPolicy, replicas int32) {
	c := o.c
	o.cleanPodPolicy("spec.runPolicy.cleanPodPolicy", rp.CleanPodPolicy)
	out := &apiv1.RunPolicy{
		BackoffLimit: rp.BackoffLimit, ActiveDeadlineSeconds: rp.ActiveDeadlineSeconds, TTLSecondsAfterFinished: rp.TTLSecondsAfterFinished,
		JobPolicy: o.jobPolicy,
	}
	if rp.BackoffLimit == nil && o.restarts() {
		o.c.ignore("spec.runPolicy.backoffLimit", "not written: kiln restarts a failed gang 0 times, where the operator restarts "+
			"OnFailure replicas in place; write backoffLimit for the restarts you want")
	}
	if !sameJSON(*out, apiv1.RunPolicy{}) {
		o.job.Spec.RunPolicy = out
	}
	o.job.Spec.Suspend = rp.Suspend
	if m := rp.ManagedBy; m != nil && *m != "" && *m != kubeflowv1.ManagedByOperator {
		c.fail(apiv1.CodeUnsupported, "spec.runPolicy.managedBy",
			fmt.Sprintf("managedBy is %q: kiln runs the jobs the operator would (%s)", *m, kubeflowv1.ManagedByOperator),
			"drop managedBy: kiln admits the job with its own queue")
	}
	o.scheduling(rp.SchedulingPolicy, replicas)
}

// cleanPodPolicy carries the operator's over: which of a job's pods
// (processes, locally) are stopped when it ends. Not written, it is the
// operator's default, None, where kiln's own is Running. The deprecated
// spec.cleanPodPolicy of an MPIJob counts unless runPolicy's is written.
func (o *opJob) cleanPodPolicy(_ string, p *kubeflowv1.CleanPodPolicy) {
	switch {
	case p != nil:
		o.jobPolicy.CleanPodPolicy = apiv1.CleanPodPolicy(*p)
	case o.jobPolicy.CleanPodPolicy == "":
		o.jobPolicy.CleanPodPolicy = apiv1.CleanPodPolicyNone
	}
}

// scheduling reads a gang scheduler's policy: kiln admits a job's
// replicas all together itself, so only the timeout carries over.
func (o *opJob) scheduling(sp *kubeflowv1.SchedulingPolicy, replicas int32) {
	if sp == nil {
		return
	}
	c, f := o.c, "spec.runPolicy.schedulingPolicy"
	if sp.MinAvailable != nil && *sp.MinAvailable != replicas {
		c.fail(apiv1.CodeUnsupported, f+".minAvailable",
			fmt.Sprintf("minAvailable is %d of %d replicas: kiln admits a job's replicas all together or not at all", *sp.MinAvailable, replicas),
			"drop minAvailable, or set it to the job's replicas")
	}
	if sp.Queue != "" {
		c.fail(apiv1.CodeUnsupported, f+".queue", fmt.Sprintf("queue is %q: kiln admits jobs from one queue per home, ordered by priority", sp.Queue),
			"drop queue")
	}
	if len(sp.MinResources) > 0 {
		c.ignore(f+".minResources", "kiln asks for every replica's resources at once")
	}
	if sp.PriorityClass != "" {
		c.ignore(f+".priorityClass", "kiln orders admission by a TrainJob's spec.priority, not by PriorityClass")
	}
	if sp.ScheduleTimeoutSeconds != nil {
		o.gang = &apiv1.GangPolicy{ScheduleTimeoutSeconds: sp.ScheduleTimeoutSeconds}
	}
}

// total is the replicas of every group.
func (o *opJob) total() int32 {
	var n int32
	for _, r := range o.replicas {
		n += r.count
	}
	return n
}

// elastic reads a PyTorchJob's elasticPolicy: the job runs from
// minReplicas to maxReplicas nodes (each default: the replicas written)
// with torchrun's c10d rendezvous, whose endpoint and ID kiln picks. The
// replicas written are then no fixed size: kiln admits as many as fit.
func (o *opJob) elastic(e *kubeflowv1.ElasticPolicy, tr *apiv1.Trainer) *apiv1.ElasticPolicy {
	c, f := o.c, "spec.elasticPolicy"
	total := o.total()
	out := &apiv1.ElasticPolicy{MinNodes: e.MinReplicas, MaxNodes: e.MaxReplicas, MaxRestarts: e.MaxRestarts}
	if out.MinNodes == nil {
		out.MinNodes = &total
	}
	if out.MaxNodes == nil {
		out.MaxNodes = &total
	}
	tr.NumNodes = nil
	if b := e.RDZVBackend; b != nil && *b != "c10d" {
		c.fail(apiv1.CodeUnsupported, f+".rdzvBackend", fmt.Sprintf("rdzvBackend is %q: kiln's elastic jobs meet through c10d on their first node", *b), "set c10d, or drop rdzvBackend")
	}
	if e.NProcPerNode != nil {
		procs := apiv1.Quantity(fmt.Sprint(*e.NProcPerNode))
		tr.NumProcPerNode = &procs
	}
	for name, set := range map[string]bool{
		"rdzvHost": e.RDZVHost != nil, "rdzvPort": e.RDZVPort != nil, "rdzvId": e.RDZVID != nil,
		"rdzvConf": len(e.RDZVConf) > 0, "standalone": e.Standalone != nil, "metrics": len(e.Metrics) > 0,
	} {
		if set {
			c.ignore(f+"."+name, "kiln picks the rendezvous (c10d on the first node, an ID per attempt) and grows a job when the pool has room")
		}
	}
	return out
}

// restarts reports whether a replica group's policy restarts it.
func (o *opJob) restarts() bool {
	if p := o.jobPolicy.RestartPolicy; p != "" && p != apiv1.RestartPolicyNever {
		return true
	}
	for _, g := range o.jobPolicy.Groups {
		if g.RestartPolicy != "" && g.RestartPolicy != apiv1.RestartPolicyNever {
			return true
		}
	}
	for _, r := range o.overrides {
		if r.RestartPolicy != "" && r.RestartPolicy != apiv1.RestartPolicyNever {
			return true
		}
	}
	return false
}
