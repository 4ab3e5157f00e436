package node

import (
	"context"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/workflow"
)

// NoAttempt is embedded by kinds that run no attempt of their own (maps,
// subworkflows, gates): their Build and Judge are never called.
type NoAttempt struct{}

// Build implements Handler: it is an error, never reached.
func (NoAttempt) Build(context.Context, *Attempt, *job.Spec) error {
	return errors.New("this kind of node runs no attempt of its own")
}

// Judge implements Handler: never reached.
func (NoAttempt) Judge(*workflow.Task, *job.Status) Verdict {
	return Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeStart, Message: "this kind of node runs no attempt of its own", Permanent: true}
}

// GatherAll judges a group whose children must all succeed (a dynamic
// fragment, a subworkflow, the onExit tasks): it fails as soon as one
// fails, and once all succeeded its outputs are plan's workflow outputs,
// expanded in the children's scope, over base.
func GatherAll(g *Group, plan *workflow.Plan, base map[string]string) (Verdict, bool) {
	for _, c := range g.Children {
		if c.Phase == apiv1.PhaseFailed || c.Phase == apiv1.PhaseCancelled {
			return Verdict{
				Phase: apiv1.PhaseFailed, Code: apiv1.CodeChildFailed,
				Message: fmt.Sprintf("task %s %s: %s", c.Name, lower(c.Phase), c.Message),
			}, true
		}
	}
	if !g.Done() {
		return Verdict{}, false
	}
	outputs := map[string]string{}
	for k, v := range base {
		outputs[k] = v
	}
	if plan.Outputs != nil {
		for _, o := range append(append([]apiv1.WorkflowOutput(nil), plan.Outputs.Parameters...), plan.Outputs.Artifacts...) {
			v, err := g.Expand(o.Value)
			if err != nil {
				return Verdict{
					Phase: apiv1.PhaseFailed, Code: apiv1.CodeOutput, Permanent: true,
					Message: fmt.Sprintf("output %s: %v (a task it reads did not run)", o.Name, err),
				}, true
			}
			outputs[o.Name] = v
		}
	}
	return Verdict{Phase: apiv1.PhaseSucceeded, Outputs: outputs}, true
}

func lower(p apiv1.Phase) string {
	switch p {
	case apiv1.PhaseFailed:
		return "failed"
	case apiv1.PhaseCancelled:
		return "was cancelled"
	}
	return string(p)
}
