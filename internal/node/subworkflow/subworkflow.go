// Package subworkflow is the node handler of a task that runs another
// workflow, and of the node that runs a workflow's onExit tasks: both run
// a compiled workflow's tasks as the node's children.
package subworkflow

import (
	"context"
	"encoding/json"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// Handler runs subworkflow nodes, or, built with Exit, the exit node.
type Handler struct {
	node.NoAttempt
	kind apiv1.NodeKind
}

var (
	_ node.Handler = Handler{}
	_ node.Grouper = Handler{}
)

// New returns the subworkflow handler.
func New() Handler { return Handler{kind: apiv1.NodeKindSubworkflow} }

// Exit returns the handler of the node that runs onExit tasks.
func Exit() Handler { return Handler{kind: apiv1.NodeKindExit} }

// Kind implements node.Handler.
func (h Handler) Kind() apiv1.NodeKind { return h.kind }

// RunsFirst implements node.Grouper: only the workflow's tasks run.
func (Handler) RunsFirst(*workflow.Task) bool { return false }

// Expand implements node.Grouper: the workflow's tasks, named under the
// node, with the params the task gives them (templates expanded in the
// parent's scope) and the workflow's defaults. The exit node's tasks read
// the run's params.
func (h Handler) Expand(_ context.Context, x *node.Expansion) (*node.Children, error) {
	sub := x.Task.Sub
	ch := &node.Children{Plan: sub.Plan, Local: true}
	if h.kind == apiv1.NodeKindExit {
		return ch, nil
	}
	params, err := h.params(x, sub)
	if err != nil {
		return nil, err
	}
	ch.Params = params
	ch.Record, err = json.Marshal(params)
	return ch, err
}

// params resolves the params the subworkflow runs with, or reads them
// from what was recorded.
func (Handler) params(x *node.Expansion, sub *workflow.Sub) (map[string]string, error) {
	params := map[string]string{}
	if x.Recorded != nil {
		return params, json.Unmarshal(x.Recorded, &params)
	}
	for _, p := range sub.Plan.Workflow.Spec.Params {
		if p.Default != nil {
			params[p.Name] = *p.Default
		}
	}
	for i, p := range sub.Params {
		v, err := x.Inputs.Expand(p.Value)
		if err != nil {
			return nil, &apiv1.Error{Code: apiv1.CodeTemplate, Field: fmt.Sprintf("workflow.params[%d].value", i), Message: err.Error()}
		}
		params[p.Name] = v
	}
	return params, nil
}

// Gather implements node.Grouper: every task must succeed; the node's
// outputs are the workflow's outputs.
func (Handler) Gather(t *workflow.Task, g *node.Group) (node.Verdict, bool) {
	return node.GatherAll(g, g.Plan, nil)
}
