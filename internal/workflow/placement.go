package workflow

import (
	"errors"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// place resolves where a compiled task's containers come from: its image
// and pod template, each from the most specific place that sets one.
// A training job's runtime's pod template lies under the task's; an error
// says they cannot be merged.
func (t *Task) place(wf *apiv1.Workflow, field string) error {
	t.PodTemplate = t.Spec.PodTemplate
	if t.PodTemplate == nil {
		t.PodTemplate = wf.Spec.PodTemplate
	}
	if t.Train != nil && t.Train.Runtime != nil && t.Train.Runtime.PodTemplate != nil {
		pt, err := mergePodTemplates(t.Train.Runtime.PodTemplate, t.PodTemplate)
		if err != nil {
			return err
		}
		t.PodTemplate = pt
	}
	switch {
	case t.Spec.Train != nil && t.Spec.Train.Image != "":
		t.Image, t.ImageField = t.Spec.Train.Image, field+".train.image"
	case t.Spec.Image != "":
		t.Image, t.ImageField = t.Spec.Image, field+".image"
	case wf.Spec.Image != "":
		t.Image, t.ImageField = wf.Spec.Image, "spec.image"
	case t.Train != nil && t.Train.Image != "":
		t.Image, t.ImageField = t.Train.Image, field+".train.runtime"
	default:
		t.ImageField = field + ".image"
		if t.Spec.Train != nil {
			t.ImageField = field + ".train.image"
		}
	}
	if t.Map != nil {
		// A map's items run its child, copied before the task was placed.
		t.Map.Child.PodTemplate, t.Map.Child.Image, t.Map.Child.ImageField = t.PodTemplate, t.Image, t.ImageField
	}
	return nil
}

// RequireImages checks that every task of p has a container image, as
// backends that run containers need. doc is where p was read from; the
// error joins one KLN-1019 error per task without one.
func RequireImages(doc *Document, p *Plan) error {
	var errs []error
	for _, t := range p.Tasks {
		if t.Image != "" || t.Federated != nil { // a federated task runs at the parties, each checking its own
			continue
		}
		field := t.ImageField
		if p.Workflow.Kind == apiv1.KindTrainJob {
			field = trainJobFields(initializerFields(field, p.Workflow))
		}
		errs = append(errs, docError(doc, apiv1.CodeImageRequired, p.fieldAsWritten(field),
			"task "+t.Spec.Name+" has no container image, which the kubernetes backend needs"))
	}
	err := errors.Join(errs...)
	locateAll([]Document{*doc}, err)
	return err
}
