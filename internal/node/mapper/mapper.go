// Package mapper is the node handler of a map task: a task with forEach
// runs once per item of a list, each item a child node, as Flyte's map
// tasks and Argo's withItems, withParam and withSequence do.
package mapper

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/dag"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// Handler runs map nodes.
type Handler struct{ node.NoAttempt }

var (
	_ node.Handler = Handler{}
	_ node.Grouper = Handler{}
)

// New returns the map handler.
func New() Handler { return Handler{} }

// Kind implements node.Handler.
func (Handler) Kind() apiv1.NodeKind { return apiv1.NodeKindMap }

// RunsFirst implements node.Grouper: a map runs only its items.
func (Handler) RunsFirst(*workflow.Task) bool { return false }

// Expand implements node.Grouper: one child per item, named by its index.
func (Handler) Expand(_ context.Context, x *node.Expansion) (*node.Children, error) {
	m := x.Task.Map
	items, err := list(x, m)
	if err != nil {
		return nil, err
	}
	plan := &workflow.Plan{Tasks: make([]workflow.Task, len(items)), Index: make(map[string]int, len(items)), Graph: dag.New(len(items))}
	for i := range items {
		plan.Tasks[i] = m.Child
		plan.Index[strconv.Itoa(i)] = i
	}
	record, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	return &node.Children{Plan: plan, Items: items, MaxParallel: m.MaxParallel, Record: record}, nil
}

// list is the map's items: recorded, literal, or read from its template.
func list(x *node.Expansion, m *workflow.Map) ([]json.RawMessage, error) {
	switch {
	case x.Recorded != nil:
		var items []json.RawMessage
		err := json.Unmarshal(x.Recorded, &items)
		return items, err
	case m.From == "":
		return m.Items, nil
	}
	v, err := x.Inputs.Expand(m.From)
	if err != nil {
		return nil, &apiv1.Error{Code: apiv1.CodeTemplate, Field: "forEach.from", Message: err.Error()}
	}
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(v), &items); err != nil || items == nil && !bytes.Equal(bytes.TrimSpace([]byte(v)), []byte("[]")) {
		return nil, &apiv1.Error{
			Code: apiv1.CodeNotAList, Field: "forEach.from",
			Message: fmt.Sprintf("%s is %s, not a JSON list", m.From, quote(v)),
		}
	}
	if len(items) > workflow.MaxItems {
		return nil, &apiv1.Error{
			Code: apiv1.CodeOutOfRange, Field: "forEach.from",
			Message: fmt.Sprintf("%s holds %d items, out of range: a map runs at most %d", m.From, len(items), workflow.MaxItems),
		}
	}
	return items, nil
}

// quote quotes the first 64 bytes of v.
func quote(v string) string {
	if len(v) > 64 {
		return strconv.Quote(v[:64]) + " (first 64 bytes)"
	}
	return strconv.Quote(v)
}

// Gather implements node.Grouper: the map succeeds when at least as many
// items succeeded as its success policy asks, once all have ended; it is
// decided as soon as too many failed. Each output parameter is the JSON
// list of the items' values, in item order (null for an item without one),
// and each output artifact the JSON list of the items' paths to it.
func (Handler) Gather(t *workflow.Task, g *node.Group) (node.Verdict, bool) {
	total := g.Counts.Total - g.Counts.SkippedByCondition
	need := t.Map.Need(total)
	lost := g.Counts.Failed + g.Counts.Skipped - g.Counts.SkippedByCondition + g.Counts.Cancelled
	if lost > total-need {
		return node.Verdict{Phase: apiv1.PhaseFailed, Code: apiv1.CodeTooFewSucceeded, Message: fmt.Sprintf(
			"%d of %d items did not succeed (%s); %d must%s", lost, total, lostParts(g.Counts), need, firstFailure(g))}, true
	}
	if !g.Done() {
		return node.Verdict{}, false
	}
	return node.Verdict{Phase: apiv1.PhaseSucceeded, Outputs: gathered(t, g)}, true
}

// lostParts says how the items that did not succeed ended, in the words
// and numbers of the map's counts: "1 failed, 2 skipped".
func lostParts(c apiv1.ChildCounts) string {
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{c.Failed, "failed"}, {c.Skipped - c.SkippedByCondition, "skipped"}, {c.Cancelled, "cancelled"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	return strings.Join(parts, ", ")
}

func firstFailure(g *node.Group) string {
	for _, c := range g.Children {
		if c.Phase == apiv1.PhaseFailed {
			return fmt.Sprintf(" (first failure: %s: %s)", c.Name, c.Message)
		}
	}
	return ""
}

// gathered is each output parameter's values as a JSON list: those the
// map's task declares, or, for a map of a workflow, the workflow's; and
// each output artifact as the JSON list of the items' paths to it, in
// item order (null for an item that did not succeed).
func gathered(t *workflow.Task, g *node.Group) map[string]string {
	out := map[string]string{}
	outs := t.Map.Child.Outputs()
	for _, name := range outs.Params() {
		vals := make([]*string, len(g.Children))
		for i, c := range g.Children {
			if v, ok := c.Outputs[name]; ok {
				vals[i] = &v
			}
		}
		out[name] = jsonList(vals)
	}
	if outs == nil || g.Artifact == nil {
		return out
	}
	for _, a := range outs.Artifacts {
		paths := make([]*string, len(g.Children))
		for i, c := range g.Children {
			if c.Phase != apiv1.PhaseSucceeded {
				continue
			}
			if p, ok := g.Artifact(i, a.Name); ok {
				paths[i] = &p
			}
		}
		out[a.Name] = jsonList(paths)
	}
	return out
}

// jsonList is vals as a JSON list of strings and nulls.
func jsonList(vals []*string) string {
	b, _ := json.Marshal(vals) // strings and nulls always encode
	return string(b)
}
