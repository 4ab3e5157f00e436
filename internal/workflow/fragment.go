package workflow

import (
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/training"
)

// maxFragment bounds the text of a dynamic task's fragment.
const maxFragment = 1 << 20

// CompileFragment reads and compiles the fragment a dynamic task wrote:
// YAML or JSON with tasks and, optionally, outputs. It is checked as a
// submitted workflow is, with the same coded errors, each naming the
// fragment of task as its file; the fragment may read the run's params.
// Its tasks may run, as subworkflows or per map item, the workflows of
// lib (the run's) and, where lib has none of the name, the templates
// stored finds (the project's; nil finds none).
func CompileFragment(task string, text []byte, params []string, lib Library, stored Stored) (*Plan, error) {
	file := fmt.Sprintf("fragment of task %s", task)
	if len(text) > maxFragment {
		return nil, &apiv1.Error{
			Code: apiv1.CodeOutOfRange, File: file,
			Message: fmt.Sprintf("the fragment is %d bytes, out of range: at most %d", len(text), maxFragment),
		}
	}
	doc, err := parseDocument(file, 0, 0, text) // a fragment has no lines of a file
	if err != nil {
		return nil, err
	}
	doc.Kind, doc.Name = "Fragment", task
	frag := &apiv1.Fragment{}
	problems, ok := decodeStrict(&doc, frag)
	if !ok {
		return nil, errors.Join(problems...)
	}
	wf := &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: task}, Spec: apiv1.WorkflowSpec{Tasks: frag.Tasks, Outputs: frag.Outputs}}
	for _, p := range params {
		wf.Spec.Params = append(wf.Spec.Params, apiv1.Param{Name: p, Default: new(string)})
	}
	found := newLookup(stored)
	c := &checker{doc: &doc, runtimes: training.NewRuntimes(), running: []string{task}, lib: lib, stored: found}
	p := c.fragment(wf)
	if err := found.storeError(); err != nil {
		return nil, err
	}
	// As for a submitted workflow, what decoding found (unknown fields,
	// bare values decoded as written) hides no other problem.
	if errs := append(problems, c.errs...); len(errs) > 0 {
		return nil, c.tally.join(errs)
	}
	return p, nil
}

// fragment compiles a fragment's tasks and outputs.
func (c *checker) fragment(wf *apiv1.Workflow) *Plan {
	p := &Plan{Workflow: wf, FailFast: true, File: c.doc.File, Object: c.doc.Object()}
	params := c.params(wf.Spec.Params)
	if len(wf.Spec.Tasks) == 0 {
		c.add(apiv1.CodeRequired, "tasks", "a fragment needs at least one task")
	}
	c.tasks(p, "tasks", wf.Spec.Tasks, params)
	p.Outputs = wf.Spec.Outputs
	c.workflowOutputs("outputs", wf.Spec.Outputs, p, params)
	return p
}
