package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/training"
)

// TrainTaskName is the name of the one task of a run made from a TrainJob.
const TrainTaskName = "trainer"

// maxSeconds is maxDuration in whole seconds.
const maxSeconds = int64(maxDuration / time.Second)

// trainTask checks a task that runs a TrainJob and compiles its gang.
func (c *checker) trainTask(field string, t *apiv1.Task) Task {
	if len(t.Command) > 0 || len(t.Args) > 0 {
		c.addHint(apiv1.CodeInvalidValue, field+".command", "move command and args into the train block",
			"a train task takes its command in train.command, not command")
	}
	out := Task{
		Spec: t, Kind: apiv1.NodeKindTrain,
		Timeout:          c.duration(field+".timeout", t.Timeout),
		AdmissionTimeout: c.duration(field+".admissionTimeout", t.AdmissionTimeout),
		Retry:            c.retry(field+".retries", t.Retries),
	}
	c.env(field+".env", t.Env)
	c.outputs(field+".outputs", t.Outputs, false)
	if t.Resources != nil {
		c.addHint(apiv1.CodeInvalidValue, field+".resources", "move resources into train.resourcesPerNode",
			"a train task sizes its nodes with train.resourcesPerNode")
	}
	for k, name := range t.Train.Initializers {
		if dep := name + apiv1.InitializerSuffix; !slices.Contains(t.DependsOn, dep) {
			c.addHint(apiv1.CodeUnknownDep, fmt.Sprintf("%s.train.initializers[%d]", field, k), "add "+dep+" to dependsOn",
				"the trainer reads the %s initializer's result but does not depend on task %s", name, dep)
		}
	}
	j, problems := training.Merge(t.Train, c.runtimes)
	for _, p := range problems {
		c.add(p.Code, field+".train."+p.Field, "%s", p.Msg)
	}
	if j != nil && len(problems) == 0 {
		if fp := j.Runtime.FailurePolicy; t.Retries == nil && fp != nil && fp.MaxRestarts != nil {
			out.Retry.Limit = int(*fp.MaxRestarts) // the runtime's, for a job that sets none
		}
		out.Train, out.Request, out.PerHost = j, j.Request(), j.PerNode
		if j.Elastic != nil {
			out.MinHosts, out.MaxHosts = j.Elastic.MinNodes, j.Elastic.MaxNodes
		}
		if out.AdmissionTimeout == 0 {
			out.AdmissionTimeout = j.ScheduleTimeout
		}
	}
	return out
}

// DecodeTrainJob decodes doc as a TrainJob.
func DecodeTrainJob(doc *Document) (*apiv1.TrainJob, error) {
	if err := checkHeader(doc, apiv1.KindTrainJob); err != nil {
		return nil, err
	}
	tj := &apiv1.TrainJob{}
	problems, ok := decodeStrict(doc, tj)
	return decoded(tj, problems, ok)
}

// DecodeTrainingRuntime decodes doc as a TrainingRuntime and checks it.
func DecodeTrainingRuntime(doc *Document) (*apiv1.TrainingRuntime, error) {
	if err := checkHeader(doc, apiv1.KindTrainingRuntime); err != nil {
		return nil, err
	}
	return decodeRuntime(doc)
}

// DecodeRuntime decodes doc as a TrainingRuntime or a
// ClusterTrainingRuntime (its kind says which; the two share a spec) and
// checks it. Its status, which kiln sets, is dropped.
func DecodeRuntime(doc *Document) (*apiv1.TrainingRuntime, error) {
	kind := apiv1.KindTrainingRuntime
	if doc.Kind == apiv1.KindClusterTrainingRuntime {
		kind = doc.Kind
	}
	if err := checkHeader(doc, kind); err != nil {
		return nil, err
	}
	return decodeRuntime(doc)
}

func decodeRuntime(doc *Document) (*apiv1.TrainingRuntime, error) {
	rt := &apiv1.TrainingRuntime{}
	problems, ok := decodeStrict(doc, rt)
	rt.Status = nil
	rt, err := decoded(rt, problems, ok)
	if rt == nil {
		return nil, err
	}
	c := &checker{doc: doc}
	if err != nil {
		c.errs = append(c.errs, err)
	}
	c.name("metadata.name", rt.Metadata.Name)
	for _, p := range training.CheckRuntime(&rt.Spec) {
		c.add(p.Code, "spec."+p.Field, "%s", p.Msg)
	}
	switch p := rt.Spec.MLPolicy; {
	case p == nil:
		c.add(apiv1.CodeNoMLPolicy, "spec.mlPolicy", "a TrainingRuntime needs an mlPolicy with one framework")
	case len(training.Frameworks(p)) != 1:
		c.add(apiv1.CodeNoMLPolicy, "spec.mlPolicy", "mlPolicy must set exactly one framework, it sets %v", training.Frameworks(p))
	}
	if len(c.errs) > 0 {
		return nil, c.err()
	}
	return rt, nil
}

// FromTrainJob returns the workflow a TrainJob runs as: the trainer
// task, and one task per initializer that the trainer depends on. Its
// backoffLimit becomes the trainer's retries, its activeDeadlineSeconds
// the run's timeout and its ttlSecondsAfterFinished the run's; the rest
// of its runPolicy becomes the trainer's policy.
func FromTrainJob(tj *apiv1.TrainJob) *apiv1.Workflow {
	ref := tj.Spec.RuntimeRef
	task := apiv1.Task{Name: TrainTaskName, Train: &apiv1.TrainTask{Runtime: ref.Name, RuntimeKind: ref.Kind}, Priority: tj.Spec.Priority}
	if tj.Spec.Trainer != nil {
		task.Train.Trainer = *tj.Spec.Trainer
	}
	task.PodTemplate = withQueueLabel(tj)
	inits, names := initializerTasks(tj)
	task.Train.Initializers = names
	for _, t := range inits {
		task.DependsOn = append(task.DependsOn, t.Name)
	}
	wf := &apiv1.Workflow{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindTrainJob},
		Metadata: tj.Metadata, Spec: apiv1.WorkflowSpec{Tasks: append([]apiv1.Task{task}, inits...)},
	}
	if rp := tj.Spec.RunPolicy; rp != nil {
		if p := rp.JobPolicy; p.CleanPodPolicy != "" || p.RestartPolicy != "" || len(p.Groups) > 0 {
			wf.Spec.Tasks[0].Train.Policy = &p
		}
		if b := rp.BackoffLimit; b != nil && *b >= 0 && *b <= maxRetries {
			wf.Spec.Tasks[0].Retries = &apiv1.RetryStrategy{Limit: int(*b)}
		}
		if d := rp.ActiveDeadlineSeconds; d != nil && *d >= 1 && *d <= maxSeconds {
			wf.Spec.Timeout = fmt.Sprintf("%ds", *d)
		}
		if t := rp.TTLSecondsAfterFinished; t != nil && *t >= 0 && int64(*t) <= maxSeconds {
			wf.Spec.TTLSecondsAfterFinished = t
		}
	}
	return wf
}

// checkRunPolicy checks a TrainJob's runPolicy in its own terms.
func checkRunPolicy(doc *Document, rp *apiv1.RunPolicy) []error {
	if rp == nil {
		return nil
	}
	var errs []error
	if b := rp.BackoffLimit; b != nil && (*b < 0 || *b > maxRetries) {
		errs = append(errs, docError(doc, apiv1.CodeOutOfRange, "spec.runPolicy.backoffLimit",
			fmt.Sprintf("backoffLimit is %d, out of range: it lies from 0 to %d restarts", *b, maxRetries)))
	}
	if d := rp.ActiveDeadlineSeconds; d != nil && (*d < 1 || *d > maxSeconds) {
		errs = append(errs, docError(doc, apiv1.CodeOutOfRange, "spec.runPolicy.activeDeadlineSeconds",
			fmt.Sprintf("activeDeadlineSeconds is %d, out of range: it lies from 1 to %d seconds (one year)", *d, maxSeconds)))
	}
	if d := rp.TTLSecondsAfterFinished; d != nil && (*d < 0 || int64(*d) > maxSeconds) {
		errs = append(errs, docError(doc, apiv1.CodeOutOfRange, "spec.runPolicy.ttlSecondsAfterFinished",
			fmt.Sprintf("ttlSecondsAfterFinished is %d, out of range: it lies from 0 to %d seconds (one year)", *d, maxSeconds)))
	}
	return errs
}

// trainJobFields maps a field of the one-task workflow back to the
// TrainJob field a user wrote.
func trainJobFields(field string) string {
	r := strings.NewReplacer("spec.tasks[0].train.policy.", "spec.runPolicy.", "spec.tasks[0].train.", "spec.trainer.", "spec.tasks[0].podTemplate", "spec.podTemplate", "spec.tasks[0].retries.limit", "spec.runPolicy.backoffLimit",
		"spec.tasks[0].priority", "spec.priority",
		"spec.timeout", "spec.runPolicy.activeDeadlineSeconds")
	field = r.Replace(field)
	if field == "spec.trainer.runtimeKind" {
		return "spec.runtimeRef.kind"
	}
	return strings.Replace(field, "spec.trainer.runtime", "spec.runtimeRef.name", 1)
}

// CompileTrainJob compiles a TrainJob as its one-task workflow. Errors
// name the TrainJob's own fields (spec.trainer.numNodes, not the task's).
func CompileTrainJob(doc *Document, tj *apiv1.TrainJob, runtimes *Runtimes) (*Plan, error) {
	policyErrs := append(checkRunPolicy(doc, tj.Spec.RunPolicy), checkAPIGroup(doc, tj.Spec.RuntimeRef.APIGroup)...)
	wf := FromTrainJob(tj)
	p, err := Compile(doc, wf, runtimes)
	for _, e := range apiv1.Errors(err) {
		e.Field = trainJobFields(initializerFields(e.Field, wf))
	}
	if len(policyErrs) > 0 {
		return nil, errors.Join(append(policyErrs, err)...)
	}
	if p != nil && tj.Spec.Suspend != nil {
		p.Suspend = *tj.Spec.Suspend
	}
	return p, err
}

// Runtimes is the set of runtimes train tasks may name.
type Runtimes = training.Runtimes

// StoredRuntimes finds the runtimes stored with kiln apply, for the train
// tasks whose runtime the files lack; nil finds none.
type StoredRuntimes = training.Lookup

// checkAPIGroup checks a runtimeRef's apiGroup: kiln's, Trainer's or none.
func checkAPIGroup(doc *Document, group string) []error {
	switch group {
	case "", apiv1.GroupKiln, apiv1.GroupTrainer:
		return nil
	}
	return []error{docError(doc, apiv1.CodeRuntimeRef, "spec.runtimeRef.apiGroup",
		fmt.Sprintf("apiGroup %q is neither %s nor %s", group, apiv1.GroupKiln, apiv1.GroupTrainer))}
}
