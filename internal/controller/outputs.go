package controller

import (
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runOutputs works out a succeeded run's outputs (spec.outputs) from its
// tasks'. An output that reads a task that did not run is left out, and
// an event says so.
func (r *round) runOutputs(cfg *Config) {
	rs := r.rs
	o := rs.plan.Outputs
	if o == nil {
		return
	}
	in := scopeInputs(cfg, rs, nil)
	out := &apiv1.RunOutputs{}
	for _, list := range []struct {
		outputs []apiv1.WorkflowOutput
		into    *map[string]string
	}{{o.Parameters, &out.Parameters}, {o.Artifacts, &out.Artifacts}} {
		for _, w := range list.outputs {
			v, err := in.Expand(w.Value)
			if err != nil {
				r.events = append(r.events, apiv1.Event{
					Reason: "OutputMissing", Code: apiv1.CodeOutput, Time: r.now,
					Message: fmt.Sprintf("workflow output %s: %v (a task it reads did not run)", w.Name, err),
				})
				continue
			}
			if *list.into == nil {
				*list.into = map[string]string{}
			}
			(*list.into)[w.Name] = v
		}
	}
	rs.run.Status.Outputs = out
}
