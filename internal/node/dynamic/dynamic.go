// Package dynamic is the node handler of a dynamic task (Flyte's
// @dynamic): its command runs as any command does and writes a workflow
// fragment to a declared output; kiln checks the fragment as it checks a
// submitted workflow and runs its tasks as the node's children.
package dynamic

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
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
	spec.Artifacts = nil // the fragment's outputs give the task's artifacts
	return err
}

// Judge implements node.Handler with node.JudgeExit.
func (Handler) Judge(_ *workflow.Task, st *job.Status) node.Verdict { return node.JudgeExit(st) }

// RunsFirst implements node.Grouper: the command writes the fragment.
func (Handler) RunsFirst(*workflow.Task) bool { return true }

// Expand implements node.Grouper: the fragment's tasks, named under the
// node. A fragment that does not compile fails the node with KLN-3013
// and every problem found in it. The workflows its tasks run (the run's,
// or the project's stored templates) are recorded with it, so that the
// children an engine rebuilds are those it made, whatever the project
// stores meanwhile.
func (Handler) Expand(_ context.Context, x *node.Expansion) (*node.Children, error) {
	rec := record{Fragment: x.Outputs[x.Task.Spec.Dynamic.Output]}
	lib, stored := x.Library, x.Stored
	if x.Recorded != nil {
		var err error
		if rec, err = readRecord(x.Recorded); err != nil {
			return nil, err
		}
		lib, stored = rec.library(), nil
	}
	plan, err := workflow.CompileFragment(x.Task.Spec.Name, []byte(rec.Fragment), x.Params, lib, stored)
	if err != nil {
		return nil, fragmentError(x.Task.Spec.Name, err)
	}
	uses := plan.Uses()
	for _, name := range slices.Sorted(maps.Keys(uses)) {
		rec.Workflows = append(rec.Workflows, uses[name])
	}
	return &node.Children{Plan: plan, Local: true, Record: rec.encode()}, nil
}

// record is what a dynamic node's expansion keeps: the fragment, and the
// workflows its tasks run.
type record struct {
	Fragment  string            `json:"fragment"`
	Workflows []*apiv1.Workflow `json:"workflows,omitempty"`
}

// encode is r as recorded: the fragment alone as a JSON string when it
// runs no workflow (as every record read before workflows were).
func (r record) encode() json.RawMessage {
	var b []byte
	if len(r.Workflows) == 0 {
		b, _ = json.Marshal(r.Fragment) // a string always encodes
	} else {
		b, _ = json.Marshal(r) // workflows decoded from JSON encode again
	}
	return b
}

// readRecord reads a record encode wrote.
func readRecord(raw json.RawMessage) (record, error) {
	var r record
	if len(raw) > 0 && raw[0] == '"' {
		err := json.Unmarshal(raw, &r.Fragment)
		return r, err
	}
	err := json.Unmarshal(raw, &r)
	return r, err
}

// library is the recorded workflows, for the fragment to find again.
func (r record) library() workflow.Library {
	lib := workflow.Library{}
	for _, wf := range r.Workflows {
		doc := &workflow.Document{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflow, Name: wf.Metadata.Name, File: "the workflows recorded with the fragment"}
		lib[wf.Metadata.Name] = workflow.LibraryEntry{Doc: doc, Workflow: wf}
	}
	return lib
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
