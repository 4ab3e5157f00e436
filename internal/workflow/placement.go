package workflow

import (
	"errors"
	"fmt"
	"maps"
	"slices"

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
// backends that run containers need, and that a task which runs its
// image's entrypoint (a training job without a command) asks for nothing
// kiln must wrap its command for: output parameters or artifacts. doc
// is where p was read from; the error joins one coded error per problem.
func RequireImages(doc *Document, p *Plan) error {
	// A workflow that several tasks run is named once.
	var errs []error
	for _, e := range apiv1.Errors(requireImages(doc, p)) {
		if !slices.ContainsFunc(errs, func(o error) bool { return o.Error() == e.Error() }) {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// requireImages is RequireImages of p and of the plans of the
// workflows its tasks run.
func requireImages(doc *Document, p *Plan) error {
	var errs []error
	for i, t := range p.Tasks {
		// A federated task runs at the parties, each checking its own; a
		// podless one runs no container, but the tasks it runs may.
		if t.Image == "" && t.Federated == nil && !podless(&p.Tasks[i]) {
			errs = append(errs, docError(doc, apiv1.CodeImageRequired, p.asWritten(t.ImageField),
				"task "+t.Spec.Name+" has no container image, which the kubernetes backend needs"))
		}
		if s := t.Sub; s != nil && s.Plan != nil {
			errs = append(errs, requireImages(subDocument(doc, s.Plan), s.Plan))
		}
		if o := t.Spec.Outputs; o != nil && len(o.Parameters)+len(o.Artifacts) > 0 {
			for _, field := range entrypoints(&p.Tasks[i], i) {
				e := docError(doc, apiv1.CodeEntrypointWrapped, p.asWritten(field),
					"task "+t.Spec.Name+" runs its image's entrypoint (no command), which kiln cannot wrap to collect its outputs")
				e.Hint = "write the command the image's ENTRYPOINT runs in " + p.asWritten(field) + ", or drop the task's outputs"
				errs = append(errs, e)
			}
		}
	}
	err := errors.Join(errs...)
	locateAll([]Document{*doc}, err)
	return err
}

// RequireCommands checks that every task of p has a command to run, as
// the local backend needs: a training job converted from a
// training-operator job may leave it to its image's entrypoint, which
// only a container backend runs. The error joins one KLN-1004 per
// container without one, at its field as written.
func RequireCommands(doc *Document, p *Plan) error {
	var errs []error
	for i, t := range p.Tasks {
		for _, field := range entrypoints(&p.Tasks[i], i) {
			at := p.asWritten(field)
			what := "task " + t.Spec.Name
			if p.Workflow.Kind == apiv1.KindTrainJob {
				what = "the container"
			}
			e := docError(doc, apiv1.CodeRequired, at, what+" has no command: its image's entrypoint runs on the kubernetes backend only, where the image is")
			e.Hint = "to run it on this machine, write " + at + ": the program the image's ENTRYPOINT runs (such as [python3, /opt/train.py]), in every replica type's container; the args stay as written"
			errs = append(errs, e)
		}
	}
	err := errors.Join(errs...)
	locateAll([]Document{*doc}, err)
	return err
}

// entrypoints lists the command fields (as compiled) of task t, the
// i-th, that are empty, leaving its image's entrypoint to run: the
// trainer's, and each training-operator replica type's that writes args
// alone.
func entrypoints(t *Task, i int) []string {
	j := t.Train
	if j == nil || !j.Entrypoint() {
		return nil
	}
	var out []string
	at := fmt.Sprintf("spec.tasks[%d].train.command", i)
	if len(j.Command) == 0 {
		out = append(out, at)
	}
	if op := j.Policy.TrainingOperator; op != nil {
		for _, rt := range slices.Sorted(maps.Keys(op.Replicas)) {
			r := op.Replicas[rt]
			if len(r.Command) == 0 && len(r.Args) > 0 {
				out = append(out, "spec.mlPolicy.trainingOperator.replicas."+rt+".command")
			}
		}
	}
	return out
}

// asWritten names a compiled task's field as the document writes it.
func (p *Plan) asWritten(field string) string {
	if p.Workflow.Kind == apiv1.KindTrainJob {
		field = trainJobFields(initializerFields(field, p.Workflow))
	}
	return p.fieldAsWritten(field)
}

// podless reports whether task t makes no pod of its own: a gate, a
// sensor, a subworkflow or the exit node (whose tasks make theirs), or a
// map of them.
func podless(t *Task) bool {
	kind := t.Kind
	if t.Map != nil {
		kind = t.Map.Child.Kind
	}
	switch kind {
	case apiv1.NodeKindGate, apiv1.NodeKindSensor, apiv1.NodeKindSubworkflow, apiv1.NodeKindExit:
		return true
	}
	return false
}

// subDocument is the document a subworkflow's plan was read from: doc
// itself for the exit node's tasks, else the workflow it names.
func subDocument(doc *Document, p *Plan) *Document {
	if p.File == doc.File && p.Object == doc.Object() {
		return doc
	}
	return &Document{File: p.File, Kind: p.Workflow.Kind, Name: p.Workflow.Metadata.Name}
}
