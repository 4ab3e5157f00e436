// Package dynamic is the node handler of a dynamic task (Flyte's
// @dynamic): its command runs as any command does and writes a workflow
// fragment to a declared output; kiln checks the fragment as it checks a
// submitted workflow and runs its tasks as the node's children.
package dynamic

import (
	"context"
	"encoding/json"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/node/command"
	"kiln.dev/kiln/internal/workflow"
)

// Handler runs dynamic nodes.
type Handler struct{}

var (
	_ node.Handler = Handler{}
	_ node.Grouper = Handler{}
)

// New returns the dynamic handler.
func New() Handler { return Handler{} }

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindDynamic }

// Build implements node.Handler: the command, as a command node's. It
// writes the fragment only; the task's other outputs come from the
// fragment's outputs once its tasks ran.
func (Handler) Build(ctx context.Context, a *node.Attempt, spec *job.Spec) error {
	err := command.New().Build(ctx, a, spec)
	spec.Outputs = []string{a.Task.Spec.Dynamic.Output}
	return err
}

// Judge implements node.Handler with node.JudgeExit.
func (Handler) Judge(_ *workflow.Task, st *job.Status) node.Verdict { return node.JudgeExit(st) }

// RunsFirst implements node.Grouper: the command writes the fragment.
func (Handler) RunsFirst(*workflow.Task) bool { return true }

// Expand implements node.Grouper: the fragment's tasks, named under the
// node. A fragment that does not compile fails the node with KLN-3013
// and every problem found in it.
func (Handler) Expand(_ context.Context, x *node.Expansion) (*node.Children, error) {
	text := []byte(x.Outputs[x.Task.Spec.Dynamic.Output])
	if x.Recorded != nil {
		var s string
		if err := json.Unmarshal(x.Recorded, &s); err != nil {
			return nil, err
		}
		text = []byte(s)
	}
	plan, err := workflow.CompileFragment(x.Task.Spec.Name, text, x.Params)
	if err != nil {
		return nil, fragmentError(x.Task.Spec.Name, err)
	}
	record, _ := json.Marshal(string(text)) // a string always encodes
	return &node.Children{Plan: plan, Local: true, Record: record}, nil
}

// fragmentError is err, the fragment's problems, as one KLN-3013 that
// lists each with its own code and field.
func fragmentError(task string, err error) error {
	var parts []string
	for _, e := range apiv1.Errors(err) {
		parts = append(parts, string(e.Code)+" "+e.Field+": "+e.Message)
	}
	if len(parts) == 0 {
		parts = []string{err.Error()}
	}
	return &apiv1.Error{
		Code: apiv1.CodeFragment, Object: "Task/" + task,
		Message: "the fragment it wrote is not valid: " + strings.Join(parts, "; "),
	}
}

// Gather implements node.Grouper: every child must succeed; the node's
// outputs are its own attempt's, then the fragment's outputs.
func (Handler) Gather(t *workflow.Task, g *node.Group) (node.Verdict, bool) {
	return node.GatherAll(g, g.Plan, g.Base)
}
