package node

import (
	"context"
	"encoding/json"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

// Grouper is implemented by kinds whose node runs children: a map's
// items, a dynamic task's fragment, a subworkflow's tasks, the onExit
// tasks. The engine makes the children nodes of the run, runs them as it
// runs any node, and asks the handler to judge the group once they end.
type Grouper interface {
	// RunsFirst reports whether node t runs an attempt of its own (built
	// and judged as any node's) before it expands: a dynamic task does.
	RunsFirst(t *workflow.Task) bool
	// Expand returns the node's children. With x.Recorded set it must
	// give the children it recorded then, whatever the run holds now: a
	// restarted engine rebuilds them so. An error fails the node, with
	// the error's code.
	Expand(ctx context.Context, x *Expansion) (*Children, error)
	// Gather judges the node from its children. It is called after each
	// child ends; decided says the verdict is final. Once every child has
	// ended, the verdict must be final.
	Gather(t *workflow.Task, g *Group) (v Verdict, decided bool)
}

// Expansion is what a Grouper expands a node from.
type Expansion struct {
	// Task is the node, compiled.
	Task *workflow.Task
	// Inputs resolves templates in the node's scope.
	Inputs Inputs
	// Outputs are the outputs of the node's own attempt (RunsFirst).
	Outputs map[string]string
	// Recorded is what an earlier Expand recorded, when rebuilding.
	Recorded json.RawMessage
	// Params are the names of the run's params, for fragments.
	Params []string
	// Library holds the workflows the run keeps, and Stored finds the
	// project's stored templates: what a fragment's tasks may run.
	Library workflow.Library
	Stored  workflow.Stored
}

// Children are the nodes a group runs.
type Children struct {
	// Plan holds the children compiled, with local names and their graph.
	Plan *workflow.Plan
	// Items are a map's items, one per child; nil for other kinds.
	Items []json.RawMessage
	// Local says the children's templates name each other by their local
	// names, and read Params (nil: the run's); a map's children read the
	// scope of the map itself.
	Local  bool
	Params map[string]string
	// MaxParallel caps the children running at once; 0 means no cap.
	MaxParallel int
	// Record is what the engine saves with the node, to be given back as
	// Expansion.Recorded.
	Record json.RawMessage
}

// Group is a group's children as they stand, for Gather.
type Group struct {
	// Counts counts the children by phase.
	Counts apiv1.ChildCounts
	// Children are their statuses, in order (attempts excluded).
	Children []*apiv1.NodeStatus
	// Expand expands a template in the children's scope ({{tasks.<child>...}}).
	Expand func(s string) (string, error)
	// Artifact is the path to output artifact name of child k (in
	// Children's order), if it succeeded and has one.
	Artifact func(k int, name string) (string, bool)
	// Plan is the children's plan; Base the outputs of the node's own
	// attempt, if it ran one.
	Plan *workflow.Plan
	Base map[string]string
}

// Done reports whether every child has ended.
func (g *Group) Done() bool {
	c := g.Counts
	return c.Succeeded+c.Failed+c.Skipped+c.Cancelled == c.Total
}

// Waiter is implemented by kinds whose node waits instead of running
// anything (gates, sensors): it holds no resources while it waits. The
// engine knows nothing of what a waiter waits for: it looks again at
// st.WakeAt (a sleep's end, a timeout) and st.NextLook (a poll), which
// Wait and Decide set, soon after an input arrives, and every second
// while the waiter takes input.
type Waiter interface {
	// Wait starts the node's wait and says what it waits for.
	Wait(ctx context.Context, t *workflow.Task, in Inputs, now time.Time) (*apiv1.GateStatus, error)
	// Decide says whether the wait is over: given what was sent to the
	// node since it began waiting (nil if nothing) and the time. A final
	// verdict comes with done; skip says the node ends Skipped. It may
	// move st.NextLook, to be looked at again then.
	Decide(t *workflow.Task, st *apiv1.GateStatus, in *apiv1.GateInput, now time.Time) (v Verdict, skip, done bool)
	// Accepts checks an input sent to a waiting node whose status is st:
	// nil, or a coded error saying why the node does not take it.
	Accepts(st *apiv1.GateStatus, in apiv1.GateInput) error
	// TakesInput reports whether a node waiting as st says reads what
	// people send it (an approval, a signal).
	TakesInput(st *apiv1.GateStatus) bool
	// Describe says, for people, what a node waiting as st says waits for
	// or, once st holds a decision, how its wait ended.
	Describe(st *apiv1.GateStatus) string
}
