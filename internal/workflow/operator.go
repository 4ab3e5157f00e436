package workflow

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	kubeflowv1 "kiln.dev/kiln/api/kubeflow/v1"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// operatorGroup reads training-operator's kubeflow.org/v1 jobs. Each
// becomes a TrainJob and, beside it, the TrainingRuntime that gives its
// processes the environment the operator's controller would
// (mlPolicy.trainingOperator): docs/design/0013 says why.
func operatorGroup() translator {
	return translator{apiVersion: kubeflowv1.APIVersion, kinds: map[string]translateFunc{
		kubeflowv1.KindPyTorchJob: pytorchJob,
		kubeflowv1.KindTFJob:      tfJob,
		kubeflowv1.KindMPIJob:     mpiJob,
		kubeflowv1.KindXGBoostJob: xgboostJob,
		kubeflowv1.KindJAXJob:     jaxJob,
		kubeflowv1.KindPaddleJob:  paddleJob,
	}}
}

// opJob is one training-operator job being translated: its replica
// groups as read, and kiln's TrainJob and runtime policy as they grow.
type opJob struct {
	c          *conversion
	kind, name string
	namespace  string
	// specsField is where the replica specs are written
	// (spec.pytorchReplicaSpecs); container names the kind's container
	// ("" for the first).
	specsField, container string
	replicas              map[kubeflowv1.ReplicaType]replica
	job                   *apiv1.TrainJob
	policy                apiv1.MLPolicy
	gang                  *apiv1.GangPolicy
	// jobPolicy is the replicas' restart policies and the job's
	// cleanPodPolicy, gathered for its runPolicy.
	jobPolicy apiv1.JobPolicy
	// overrides is what each replica type runs differently from the
	// trainer (mlPolicy.trainingOperator.replicas); overrideFields is
	// where each type's container is written.
	overrides      map[string]apiv1.OperatorReplica
	overrideFields map[string]string
	// Where kiln's fields are written in the job: the trainer's container,
	// the replicas that count the nodes, the processes per node and the
	// pod template.
	containerField, nodesField, procsField, podField, psField string
}

// replica is one group of replicas as written.
type replica struct {
	key   string // the key as written ("worker")
	spec  *kubeflowv1.ReplicaSpec
	count int32
}

// newOpJob starts translating a job of kind: its name, metadata and
// replica groups, which must be of the types listed.
func newOpJob(doc *Document, problems []error, meta *kubeflowv1.ObjectMeta, kind, specs, container string,
	replicas kubeflowv1.ReplicaSpecs, types ...kubeflowv1.ReplicaType,
) *opJob {
	c := &conversion{doc: doc, errs: problems}
	o := &opJob{
		c: c, kind: kind, namespace: meta.Namespace, specsField: "spec." + specs, container: container,
		replicas: map[kubeflowv1.ReplicaType]replica{}, overrideFields: map[string]string{},
	}
	o.name = meta.Name
	if o.name == "" {
		o.name = strings.TrimRight(meta.GenerateName, "-")
	}
	if o.name == "" {
		c.fail(apiv1.CodeRequired, "metadata.name", "the job has no name", "set metadata.name (or generateName)")
	}
	o.job = &apiv1.TrainJob{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindTrainJob},
		Metadata: apiv1.ObjectMeta{Name: o.name, Labels: meta.Labels, Annotations: meta.Annotations},
	}
	o.readReplicas(replicas, types)
	return o
}

// readReplicas reads the replica groups, keyed in any case as the
// operator reads them.
func (o *opJob) readReplicas(specs kubeflowv1.ReplicaSpecs, types []kubeflowv1.ReplicaType) {
	keys := make([]string, 0, len(specs))
	for k := range specs {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	for _, k := range keys {
		field := o.specsField + "." + k
		i := slices.IndexFunc(types, func(t kubeflowv1.ReplicaType) bool { return strings.EqualFold(string(t), k) })
		spec := specs[kubeflowv1.ReplicaType(k)]
		switch {
		case i < 0:
			o.c.fail(apiv1.CodeReplicaSpecs, field, fmt.Sprintf("replica type %q is not one of a %s's: %s", k, o.kind, typeList(types)), "")
			continue
		case o.has(types[i]):
			o.c.fail(apiv1.CodeReplicaSpecs, field, fmt.Sprintf("replica type %s is written twice (%s and %s)", types[i], o.replicas[types[i]].key, k), "")
			continue
		case spec == nil:
			o.c.fail(apiv1.CodeReplicaSpecs, field, "the replica spec is empty", "give it a template, or drop it")
			continue
		}
		if tm := spec.Template; tm.APIVersion != "" || tm.Kind != "" {
			o.c.ignore(field+".template.apiVersion", "a pod template has no apiVersion or kind: the operator's API server drops them, and so does kiln")
		}
		r := replica{key: k, spec: spec, count: 1}
		if spec.Replicas != nil {
			r.count = *spec.Replicas
		}
		if r.count < 0 {
			o.c.fail(apiv1.CodeOutOfRange, field+".replicas", fmt.Sprintf("replicas is %d, out of range: it lies from 0", r.count), "")
			r.count = 0
		}
		o.replicas[types[i]] = r
	}
}

func typeList(types []kubeflowv1.ReplicaType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

func (o *opJob) has(t kubeflowv1.ReplicaType) bool {
	_, ok := o.replicas[t]
	return ok
}

// field is where replica group t is written.
func (o *opJob) field(t kubeflowv1.ReplicaType) string {
	if r, ok := o.replicas[t]; ok {
		return o.specsField + "." + r.key
	}
	return o.specsField + "." + string(t)
}

// count is the replicas of group t; 0 when it is not written.
func (o *opJob) count(t kubeflowv1.ReplicaType) int32 { return o.replicas[t].count }

// need refuses a job without group t, or whose t is not of one replica
// when one says so.
func (o *opJob) need(t kubeflowv1.ReplicaType, one bool) bool {
	switch r, ok := o.replicas[t]; {
	case !ok:
		o.c.fail(apiv1.CodeReplicaSpecs, o.specsField, fmt.Sprintf("a %s needs a %s replica spec", o.kind, t), "")
		return false
	case one && r.count != 1:
		o.c.fail(apiv1.CodeReplicaSpecs, o.field(t)+".replicas", fmt.Sprintf("replicas is %d: a %s's %s is one replica", r.count, o.kind, t), "set replicas: 1, or drop it")
		return false
	}
	return true
}

// nodes sets the trainer's number of nodes, the replicas of the groups
// listed, which nodesField names.
func (o *opJob) nodes(tr *apiv1.Trainer, types ...kubeflowv1.ReplicaType) {
	var n int32
	for _, t := range types {
		n += o.count(t)
	}
	if n < 1 {
		o.c.fail(apiv1.CodeReplicaSpecs, o.nodesField, fmt.Sprintf("the job has no replicas to run: %s add up to 0", typeList(types)), "")
		return
	}
	tr.NumNodes = &n
}

// documents finishes the translation: the runtime and the TrainJob that
// runs with it. Both read as the job as written in errors (PyTorchJob/NAME,
// the runtime as PyTorchJob/NAME-pytorchjob), with its field names.
func (o *opJob) documents() ([]Document, error) {
	c := o.c
	if len(c.errs) > 0 {
		return nil, joinErrs(c.errs)
	}
	rtName := o.name + "-" + strings.ToLower(o.kind)
	if o.policy.TrainingOperator != nil && len(o.overrides) > 0 {
		o.policy.TrainingOperator.Replicas = o.overrides
	}
	o.job.Spec.RuntimeRef = apiv1.RuntimeRef{Name: rtName}
	rt := &apiv1.TrainingRuntime{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindTrainingRuntime},
		Metadata: apiv1.ObjectMeta{Name: rtName, Labels: map[string]string{"kiln.dev/converted-from": o.kind}},
		Spec:     apiv1.TrainingRuntimeSpec{MLPolicy: &o.policy, GangPolicy: o.gang},
	}
	field := o.renamer()
	rtDoc, err := translated(c.doc, apiv1.KindTrainingRuntime, rt, &Origin{Field: field})
	if err != nil {
		return nil, err
	}
	jobDoc, err := translated(c.doc, apiv1.KindTrainJob, o.job, &Origin{Namespace: o.namespace, Field: field, Ignored: c.ignored})
	if err != nil {
		return nil, err
	}
	rtDoc.Name, jobDoc.Name = rtName, o.name
	return []Document{*rtDoc, *jobDoc}, nil
}

// renamer names the fields of the translation as the job writes them.
func (o *opJob) renamer() func(string) string {
	ct := o.containerField
	pairs := []string{
		"spec.trainer.numNodes", o.nodesField,
		"spec.trainer.numProcPerNode", o.procsField,
		"spec.trainer.resourcesPerNode.cpu", ct + ".resources.requests.cpu",
		"spec.trainer.resourcesPerNode.memory", ct + ".resources.requests.memory",
		"spec.trainer.resourcesPerNode.gpu", ct + ".resources.requests[nvidia.com/gpu]",
		"spec.trainer.resourcesPerNode", ct + ".resources",
		"spec.trainer", ct,
		"spec.podTemplate", o.podField,
		"spec.suspend", "spec.runPolicy.suspend",
		"spec.mlPolicy.tensorflow.numPS", o.psField,
		"spec.mlPolicy.torch.numProcPerNode", o.procsField,
		"spec.mlPolicy.torch.elasticPolicy.minNodes", "spec.elasticPolicy.minReplicas",
		"spec.mlPolicy.torch.elasticPolicy.maxNodes", "spec.elasticPolicy.maxReplicas",
		"spec.mlPolicy.torch.elasticPolicy", "spec.elasticPolicy",
		"spec.mlPolicy.mpi.numProcPerNode", o.procsField,
		"spec.gangPolicy.scheduleTimeoutSeconds", "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds",
		".valueFrom.secret", ".valueFrom.secretKeyRef",
	}
	for _, t := range slices.Sorted(maps.Keys(o.overrides)) {
		at := "spec.mlPolicy.trainingOperator.replicas." + t
		pairs = append(pairs, at+".restartPolicy", o.field(kubeflowv1.ReplicaType(t))+".restartPolicy")
		if cf := o.overrideFields[t]; cf != "" {
			pairs = append(pairs, at, cf)
		}
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}
