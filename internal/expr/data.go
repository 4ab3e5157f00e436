package expr

import (
	"fmt"

	"cel.dev/cel-go/interpreter"
)

// Data is what a condition is evaluated over.
type Data struct {
	// Params are the run's params, by name.
	Params map[string]string
	// Tasks are the results of tasks, by name.
	Tasks map[string]TaskData
	// Item is a map task child's item, JSON-decoded: nil, string, float64,
	// bool, []any or map[string]any. Unused unless the condition was
	// compiled with Env.Item.
	Item any
	// ItemIndex is the index of Item in the map task's items, from 0.
	ItemIndex int
	// Workflow is the run's result so far, for an onExit task's
	// condition. Unused unless the condition was compiled with
	// Env.Workflow.
	Workflow WorkflowData
}

// WorkflowData is the run's result as onExit tasks see it.
type WorkflowData struct {
	// Status is "Succeeded" or "Failed".
	Status string
	// Failures are the run's tasks that failed, in the order they did.
	Failures []FailureData
}

// FailureData is one task that failed.
type FailureData struct {
	Name, Phase, Code, Message string
}

// celWorkflow is what a condition sees of d.
func (d WorkflowData) celWorkflow() workflow {
	w := workflow{Status: d.Status, Failures: make([]failure, len(d.Failures))}
	for i, f := range d.Failures {
		w.Failures[i] = failure(f)
	}
	return w
}

// TaskData is the result of one task.
type TaskData struct {
	// Phase is the task's phase: "Succeeded", "Failed" or "Skipped".
	Phase string
	// Outputs are the task's output parameters, by name. A task that did
	// not succeed may have none.
	Outputs map[string]string
}

// activation gives the condition's variables their values from d. It holds
// only the tasks the condition reads.
func (c *Condition) activation(d Data) (interpreter.Activation, error) {
	for _, p := range c.params {
		if _, ok := d.Params[p]; !ok {
			return nil, fmt.Errorf("evaluating %q: no value for param %q", c.src, p)
		}
	}
	tasks := make(map[string]task, len(c.tasks))
	for _, t := range c.tasks {
		td, ok := d.Tasks[t]
		if !ok {
			return nil, fmt.Errorf("evaluating %q: no result for task %q", c.src, t)
		}
		tasks[t] = newTask(td)
	}
	a := &activation{params: d.Params, tasks: tasks, item: d.Item, itemIndex: d.ItemIndex}
	if c.workflow {
		a.workflow = d.Workflow.celWorkflow()
	}
	return a, nil
}

// activation is a condition's variables, resolved by name.
type activation struct {
	params    map[string]string
	tasks     map[string]task
	item      any
	itemIndex int
	workflow  workflow
}

var _ interpreter.Activation = (*activation)(nil)

// ResolveName returns the value of a variable.
func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case varParams:
		return a.params, true
	case varTasks:
		return a.tasks, true
	case varItem:
		return a.item, true
	case varItemIndex:
		return a.itemIndex, true
	case varWorkflow:
		return a.workflow, true
	}
	return nil, false
}

// Parent returns nil: there is no outer scope.
func (a *activation) Parent() interpreter.Activation { return nil }
