package workflow

import (
	"fmt"

	yaml3 "go.yaml.in/yaml/v3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// tooManyTasks is KLN-1023 naming spec.tasks when a Workflow's or a
// WorkflowTemplate's YAML lists more than maxTasks tasks, else nil. It
// counts on the parsed YAML, before the document is converted and
// decoded: those cost several times what parsing does, so a file of too
// many tasks is refused at a fraction of the time and memory.
func tooManyTasks(root *yaml3.Node) *apiv1.Error {
	n := countTasks(root)
	if n <= maxTasks {
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodeOutOfRange, Field: "spec.tasks",
		Message: fmt.Sprintf("%d tasks, out of range: at most %d are allowed", n, maxTasks),
		Hint:    "split the workflow, or run the repeated work as one task with forEach",
	}
}

// countTasks is how many items a Workflow's or a WorkflowTemplate's
// spec.tasks lists in its YAML; 0 for another kind, or when spec.tasks
// is not a list written under spec.
func countTasks(root *yaml3.Node) int {
	kind, _ := nodeHead(root)
	if kind != apiv1.KindWorkflow && kind != apiv1.KindWorkflowTemplate {
		return 0
	}
	tasks := unalias(mappingValue(unalias(mappingValue(root.Content[0], "spec")), "tasks"))
	if tasks == nil || tasks.Kind != yaml3.SequenceNode {
		return 0
	}
	return len(tasks.Content)
}

// unalias is n, or the node it stands for if it is an alias.
func unalias(n *yaml3.Node) *yaml3.Node {
	if n != nil && n.Kind == yaml3.AliasNode {
		return n.Alias
	}
	return n
}
