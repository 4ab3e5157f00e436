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
		if t.Request.Fits(capacity) {
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
		errs = append(errs, &apiv1.Error{
			Code: apiv1.CodeTooLarge, File: p.File, Object: p.Object, Field: p.fieldAsWritten(field), Hint: hint,
			Message: fmt.Sprintf("%s, more than this machine's pool of %s", msg, capacity),
		})
	}
	return errors.Join(errs...)
}
