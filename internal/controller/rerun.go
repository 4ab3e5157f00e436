package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/dag"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/workflow"
)

// RerunParams asks for a rerun of a run that has ended.
type RerunParams struct {
	// Source is the run to rerun, as the store holds it: its spec, params
	// and nodes with their attempts.
	Source *apiv1.Run
	apiv1.RerunRequest
	// Key, if not nil, is stored with the new run (see SubmitParams.Key).
	Key *store.NewSubmitKey
}

// Rerun starts a new run made from Source's stored spec (its workflow,
// subworkflows and params, p.Params changed), never from a file, and
// returns it as saved. Which tasks run again follows p.Mode (see
// apiv1.RerunMode); the tasks it reuses start Succeeded with the source's
// outputs and say where they came from, those it leaves out start
// Skipped. The onExit tasks run in from and until reruns, not in only
// reruns, which run one task alone. Errors are coded: KLN-4010 for a run
// that has not ended, KLN-4020 for a node that is not a top-level task,
// KLN-4021 for an --only node whose upstream task did not succeed,
// KLN-1014 for a param the workflow does not declare.
func (rt *Runs) Rerun(ctx context.Context, p RerunParams) (*apiv1.Run, error) {
	src := p.Source
	if !src.Status.Phase.Done() {
		return nil, &apiv1.Error{
			Code: apiv1.CodeRunPhase, Object: "Run/" + string(src.ID),
			Message: fmt.Sprintf("the run is %s; only a run that has ended can be rerun", src.Status.Phase),
			Hint:    "wait for it to end, or cancel it with kiln cancel " + string(src.ID) + " (kiln resume finishes it if its engine is gone)",
		}
	}
	doc := &workflow.Document{File: "the stored spec of run " + string(src.ID), Kind: src.Kind, Name: src.Name}
	plan, err := workflow.CompileWith(doc, src.Workflow, nil, library(doc, src.Subworkflows))
	if err != nil {
		return nil, fmt.Errorf("compiling run %s: %w", src.ID, err)
	}
	given := maps.Clone(src.Params)
	if given == nil {
		given = map[string]string{}
	}
	maps.Copy(given, p.Params)
	params, err := workflow.ResolveParams(doc, plan.Workflow, given)
	if err != nil {
		return nil, err
	}
	preset, err := rerunPreset(plan, src, p.Mode, p.Node)
	if err != nil {
		return nil, err
	}
	if err := rt.producersKept(ctx, src, preset); err != nil {
		return nil, err
	}
	return rt.Submit(ctx, SubmitParams{
		Plan: plan, Params: params, Source: src.Source, WorkDir: src.WorkDir, Suspend: plan.Suspend, Project: src.Project,
		RerunOf: &apiv1.RerunOf{Run: src.ID, Mode: p.Mode, Node: p.Node}, Preset: preset,
		Cache: cmp.Or(p.Cache, apiv1.CacheOverwrite), Federation: rerunFederation(src.Federation), Key: p.Key,
	})
}

// rerunFederation is how a rerun of a federated run takes part: as its
// source did, under its own ID.
func rerunFederation(f *apiv1.FederationInfo) *apiv1.FederationInfo {
	if f == nil {
		return nil
	}
	c := *f
	c.Run = ""
	return &c
}

// choice is what a rerun does with one top-level task.
type choice int

const (
	runAgain choice = iota
	reuse           // Succeeded with the source's outputs
	leaveOut        // Skipped: not part of the rerun
)

// rerunPreset is the nodes of a rerun of src that do not start Pending:
// those it reuses and those it leaves out, in the plan's order.
func rerunPreset(plan *workflow.Plan, src *apiv1.Run, mode apiv1.RerunMode, name string) ([]apiv1.NodeStatus, error) {
	choices, err := rerunChoices(plan, src, mode, name)
	if err != nil {
		return nil, err
	}
	before := topNodes(src)
	var out []apiv1.NodeStatus
	for i, ch := range choices {
		t := plan.Tasks[i]
		switch ch {
		case reuse:
			out = append(out, ReusedNode(src.ID, before[t.Spec.Name]))
		case leaveOut:
			out = append(out, apiv1.NodeStatus{
				Name: t.Spec.Name, Phase: apiv1.PhaseSkipped, Kind: t.Kind,
				Message: fmt.Sprintf("not run: not part of this rerun (%s)", leftOutWhy(mode, name)),
			})
		}
	}
	return out, nil
}

// rerunChoices decides, for each task of plan, whether a rerun of src
// in mode from task name runs it again, reuses it or leaves it out.
func rerunChoices(plan *workflow.Plan, src *apiv1.Run, mode apiv1.RerunMode, name string) ([]choice, error) {
	k, err := rerunNode(plan, src, name)
	if err != nil {
		return nil, err
	}
	before := topNodes(src)
	succeeded := func(i int) bool { return before[plan.Tasks[i].Spec.Name].Phase == apiv1.PhaseSucceeded }
	exit, hasExit := plan.Index[workflow.ExitNode]
	isExit := func(i int) bool { return hasExit && i == exit }
	out := make([]choice, len(plan.Tasks))
	switch mode {
	case apiv1.RerunFrom:
		down := reach(plan.Graph, k, (*dag.Graph).Downstream)
		for i := range out {
			if !down[i] && succeeded(i) && !isExit(i) {
				out[i] = reuse
			}
		}
	case apiv1.RerunOnly:
		up := reach(plan.Graph, k, (*dag.Graph).Upstream)
		for i := range out {
			switch {
			case i == k:
			case up[i] && succeeded(i) && !isExit(i):
				out[i] = reuse
			case slices.Contains(plan.Graph.Upstream(k), i):
				return nil, upstreamError(src, name, plan.Tasks[i].Spec.Name, before[plan.Tasks[i].Spec.Name].Phase)
			default:
				out[i] = leaveOut
			}
		}
	case apiv1.RerunUntil:
		up := reach(plan.Graph, k, (*dag.Graph).Upstream)
		for i := range out {
			if !up[i] && !isExit(i) {
				out[i] = leaveOut
			}
		}
	default:
		return nil, &apiv1.Error{
			Code: apiv1.CodeBadRequest, Field: "mode",
			Message: fmt.Sprintf("rerun mode %q is not one of from, only, until", mode),
		}
	}
	return out, nil
}

// rerunNode is the index of top-level task name in plan, or a coded error
// that says why name is not one a rerun can start from.
func rerunNode(plan *workflow.Plan, src *apiv1.Run, name string) (int, error) {
	return topTask(plan, src, name, "a rerun starts at")
}

// topTask is the index of top-level task name in plan, or a coded error
// that says why name is not a top-level task, which what (as "a rerun
// starts at") needs.
func topTask(plan *workflow.Plan, src *apiv1.Run, name, what string) (int, error) {
	if i, ok := plan.Index[name]; ok && name != workflow.ExitNode {
		return i, nil
	}
	var tasks []string
	for _, t := range plan.Tasks {
		if t.Spec.Name != workflow.ExitNode {
			tasks = append(tasks, t.Spec.Name)
		}
	}
	e := &apiv1.Error{
		Code: apiv1.CodeRerunNode, Object: "Run/" + string(src.ID), Field: "node",
		Message: fmt.Sprintf("run %s has no top-level task %q", src.ID, name),
		Hint:    "name one of its tasks: " + strings.Join(tasks, ", "),
	}
	if top := topOf(src, name); top != "" && top != name {
		e.Message = fmt.Sprintf("%s is a child of task %s; %s a top-level task", name, top, what)
		e.Hint = "name its parent: " + top
	} else if name == workflow.ExitNode && what == retryRestarts {
		e.Message = "onExit is the workflow's exit handler, not a task; a retry runs it again at the run's new end, without asking"
	} else if name == workflow.ExitNode {
		e.Message = "onExit is the workflow's exit handler, not a task; it runs in --from and --until reruns"
	}
	return 0, e
}

// topOf is the top-level node that node name of src is, or is under; ""
// when src has no such node.
func topOf(src *apiv1.Run, name string) string {
	parent := map[string]string{}
	for _, n := range src.Status.Nodes {
		parent[n.Name] = n.Parent
	}
	if _, ok := parent[name]; !ok {
		return ""
	}
	for parent[name] != "" {
		name = parent[name]
	}
	return name
}

// upstreamError refuses an --only rerun of task name whose upstream task
// up did not succeed in src.
func upstreamError(src *apiv1.Run, name, up string, phase apiv1.Phase) error {
	if phase == "" {
		phase = apiv1.PhasePending
	}
	return &apiv1.Error{
		Code: apiv1.CodeRerunUpstream, Object: "Run/" + string(src.ID), Field: "node",
		Message: fmt.Sprintf("task %s depends on task %s, which is %s in run %s: it has no outputs to reuse", name, up, phase, src.ID),
		Hint:    fmt.Sprintf("kiln rerun %s --until %s runs %s too", src.ID, name, up),
	}
}

// reach marks node k and every node reached from it by next.
func reach(g *dag.Graph, k int, next func(*dag.Graph, int) []int) []bool {
	seen := make([]bool, g.Len())
	stack := []int{k}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		stack = append(stack, next(g, i)...)
	}
	return seen
}

// topNodes are src's top-level nodes, by name.
func topNodes(src *apiv1.Run) map[string]apiv1.NodeStatus {
	out := map[string]apiv1.NodeStatus{}
	for _, n := range src.Status.Nodes {
		if n.Parent == "" {
			out[n.Name] = n
		}
	}
	return out
}

// ReusedNode is node n of run src as a rerun reuses it: Succeeded with
// its outputs, no attempts, and where its result comes from: its last
// attempt, or what it was itself reused from.
func ReusedNode(src apiv1.RunID, n apiv1.NodeStatus) apiv1.NodeStatus {
	from := n.Reused
	if from == nil {
		from = &apiv1.Reused{Run: src, Node: n.Name}
		if k := len(n.Attempts); k > 0 {
			from.Attempt = n.Attempts[k-1].Number
		}
	}
	return apiv1.NodeStatus{
		Name: n.Name, Phase: apiv1.PhaseSucceeded, Kind: n.Kind, Outputs: n.Outputs, Reused: from, Artifacts: n.Artifacts,
		Message: "reused from " + string(from.Run),
	}
}

// leftOutWhy says why a rerun leaves a task out.
func leftOutWhy(mode apiv1.RerunMode, name string) string {
	if mode == apiv1.RerunOnly {
		return "--only " + name + " runs " + name + " alone"
	}
	return "--until " + name + " runs " + name + " and the tasks it depends on"
}

// presetNodes is the nodes of a new run of plan: those of preset as they
// are, the others Pending; nil when nothing is preset.
func presetNodes(plan *workflow.Plan, preset []apiv1.NodeStatus) []apiv1.NodeStatus {
	if len(preset) == 0 {
		return nil
	}
	byName := map[string]apiv1.NodeStatus{}
	for _, n := range preset {
		byName[n.Name] = n
	}
	out := make([]apiv1.NodeStatus, len(plan.Tasks))
	for i, t := range plan.Tasks {
		n, ok := byName[t.Spec.Name]
		if !ok {
			n = apiv1.NodeStatus{Name: t.Spec.Name, Phase: apiv1.PhasePending}
		}
		n.Kind = t.Kind
		out[i] = n
	}
	return out
}

// producersKept checks that the runs whose results a rerun reuses are
// still kept: their outputs' files go with them when they are deleted.
func (rt *Runs) producersKept(ctx context.Context, src *apiv1.Run, preset []apiv1.NodeStatus) error {
	checked := map[apiv1.RunID]bool{src.ID: true}
	for _, n := range preset {
		r := n.Reused
		if r == nil || checked[r.Run] {
			continue
		}
		checked[r.Run] = true
		_, err := rt.cfg.Store.GetRun(ctx, r.Run)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return &apiv1.Error{
				Code: apiv1.CodeRerunGone, Object: "Run/" + string(src.ID), Field: n.Name,
				Message: fmt.Sprintf("task %s would reuse the result of run %s, which was deleted with its files", n.Name, r.Run),
				Hint:    fmt.Sprintf("kiln rerun %s --from %s runs it again", src.ID, n.Name),
			}
		case err != nil:
			return fmt.Errorf("reading run %s, whose result task %s reuses: %w", r.Run, n.Name, err)
		}
	}
	return nil
}
