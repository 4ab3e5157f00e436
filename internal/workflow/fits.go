package workflow

import (
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// CheckFits checks that every task of p can ever start in a pool of the
// given capacity: a task, or a training job's whole gang, that asks for
// more is a KLN-2001 error naming the field that sets its size.
func (p *Plan) CheckFits(capacity resource.Request) error {
	var errs []error
	for i := range p.Tasks {
		t := &p.Tasks[i]
		if t.Least().Fits(capacity) {
			continue
		}
		field, msg, hint := fmt.Sprintf("spec.tasks[%d].resources", i), fmt.Sprintf("task %s asks for %s", t.Spec.Name, t.Request), ""
		if t.Train != nil {
			hint = "lower numNodes or resourcesPerNode, or raise --cpus, --memory or --gpus"
			field = fmt.Sprintf("spec.tasks[%d].train.numNodes", i)
			if !t.PerHost.Fits(capacity) {
				field = fmt.Sprintf("spec.tasks[%d].train.resourcesPerNode", i)
			}
			msg = fmt.Sprintf("task %s asks for %s at once (%d nodes of %s)", t.Spec.Name, t.Request, t.Train.Replicas(), t.PerHost)
		}
		if p.Workflow.Kind == apiv1.KindTrainJob && t.Train != nil {
			field = trainJobFields(field)
			msg = fmt.Sprintf("the job asks for %s at once (%d nodes of %s)", t.Request, t.Train.Replicas(), t.PerHost)
		}
		if t.MaxHosts > 0 {
			field, msg, hint = elasticMisfit(i, t, capacity)
		}
		if p.Workflow.Kind == apiv1.KindTrainJob {
			field = trainJobFields(field)
		}
		errs = append(errs, &apiv1.Error{
			Code: apiv1.CodeTooLarge, File: p.File, Object: p.Object, Field: p.fieldAsWritten(field), Hint: hint,
			Message: fmt.Sprintf("%s, more than this machine's pool of %s", msg, capacity),
		})
	}
	return errors.Join(errs...)
}

// elasticMisfit names what keeps an elastic job's least gang, minNodes
// hosts, from fitting: the size of one node, or the runtime's minNodes.
func elasticMisfit(i int, t *Task, capacity resource.Request) (field, msg, hint string) {
	field = fmt.Sprintf("spec.tasks[%d].train.runtime", i)
	if !t.PerHost.Fits(capacity) {
		field = fmt.Sprintf("spec.tasks[%d].train.resourcesPerNode", i)
	}
	msg = fmt.Sprintf("task %s asks for at least %s at once (minNodes %d of %s)", t.Spec.Name, t.Least(), t.MinHosts, t.PerHost)
	return field, msg, "lower the runtime's elasticPolicy.minNodes or resourcesPerNode, or raise --cpus, --memory or --gpus"
}
