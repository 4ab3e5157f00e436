package cli

import (
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// runtimeLine says which runtime, and which version, the train task
// named task of run r resolved when r was submitted: what it runs with,
// whatever became of the runtime since. "" when r does not say (a task
// that is not a top-level train task, or a run from before kiln kept it).
func runtimeLine(r *apiv1.Run, task string) string {
	if r.Workflow == nil {
		return ""
	}
	for _, t := range r.Workflow.Spec.Tasks {
		if t.Name != task || t.Train == nil || t.Train.ResolvedRuntimeRef == nil {
			continue
		}
		ref := t.Train.ResolvedRuntimeRef
		line := ref.Kind + "/" + ref.Name
		switch {
		case ref.Source == apiv1.RuntimeSourceStored && ref.Project != "":
			line += fmt.Sprintf(" version %d (stored in project %s)", ref.Version, ref.Project)
		case ref.Source == apiv1.RuntimeSourceStored:
			line += fmt.Sprintf(" version %d (stored for every project)", ref.Version)
		default:
			line += fmt.Sprintf(" (%s)", ref.Source)
		}
		return line
	}
	return ""
}
