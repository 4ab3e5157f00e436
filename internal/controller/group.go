package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/workflow"
)

// group is a node running children, as the engine tracks it.
type group struct {
	children []int               // the children's node numbers, in order
	statuses []*apiv1.NodeStatus // and their statuses
	roots    []int               // the children without upstream, released in order
	next     int                 // the next root to release
	inflight int                 // roots released and not ended
	limit    int                 // cap on inflight; 0 means none
	counts   apiv1.ChildCounts
	hopeless bool         // the group cannot succeed: no child starts any more
	stored   map[int]bool // children whose rows the store holds already
	plan     *workflow.Plan
	base     map[string]string // the outputs of the node's own attempt
	scope    *scope            // the children's local scope
}

// scope is where a child node's templates look names up.
type scope struct {
	prefix string            // what a task's name is prefixed with to name its node
	params map[string]string // nil: the run's params
	item   json.RawMessage   // a map item
	index  int               // and its place in the list
}

// expand makes node i's children nodes of the run and starts the ones
// that can start. recorded rebuilds the children an earlier engine made.
func (c *Controller) expand(ctx context.Context, r *round, i int, recorded json.RawMessage) {
	rs := r.rs
	ns := rs.nodes[i]
	in := newInputs(&c.cfg, rs, i, rs.attemptID(i, max(ns.attempt.Number, 1))).recording()
	x := &node.Expansion{
		Task: &rs.plan.Tasks[i], Inputs: in,
		Outputs: ns.status.Outputs, Recorded: recorded, Params: rs.paramNames(),
		Library: runLibrary(rs.run), Stored: store.TemplateLookup(ctx, c.cfg.Store, projectOf(rs.run)),
	}
	ch, err := rs.kinds[i].grouper.Expand(ctx, x)
	if recorded == nil && len(in.seen) > 0 { // what a map's list, a subworkflow's params read
		ns.status.Inputs = in.seen
	}
	if err != nil {
		code, msg := codeOf(err)
		r.failNode(i, code, msg)
		return
	}
	g := rs.addChildren(i, ch, c.cfg.Handlers)
	if g == nil {
		r.failNode(i, apiv1.CodeStart, "a child's kind has no handler")
		return
	}
	rs.groups[i] = g
	if recorded != nil {
		return
	}
	for _, k := range g.children {
		if g.stored[k] { // made by an earlier try of the run (kiln retry): its row exists
			rs.indexNode(k, r.now)
			g.countChild(apiv1.PhasePending, rs.nodes[k].status.Phase)
			r.nodes[k] = true
			continue
		}
		r.added = append(r.added, k)
		rs.progress.Add(apiv1.PhasePending, 1)
	}
	ns.status.Expansion = ch.Record
	if ns.status.Expansion == nil { // a restarted engine rebuilds what has a record
		ns.status.Expansion = json.RawMessage("{}")
	}
	rs.expandProgress(i)
	ns.status.Children = &g.counts
	r.expanded[i] = true
	r.runStarted()
	if ns.status.StartedAt == nil {
		ns.status.StartedAt = r.timePtr()
	}
	r.setNode(i, apiv1.PhaseRunning, "Expanded", "", fmt.Sprintf("%d %s", len(g.children), plural(len(g.children), "child")))
	r.release(i)
	r.touched[i] = true
}

// codeOf is err's code and text, KLN-3009 when it has none.
func codeOf(err error) (apiv1.Code, string) {
	var coded *apiv1.Error
	if e := apiv1.Errors(err); len(e) == 1 {
		coded = e[0]
		return coded.Code, coded.Text()
	}
	return apiv1.CodeStart, err.Error()
}

// addChildren adds group node p's children to the run: their tasks,
// graph, handlers and scopes, and their statuses (as stored, when an
// earlier engine made them). It returns nil if a child's kind has no
// handler.
func (rs *runState) addChildren(p int, ch *node.Children, handlers *node.Registry) *group {
	rs.ownPlanCopy()
	n := len(ch.Plan.Tasks)
	names := make([]string, n)
	for name, k := range ch.Plan.Index {
		names[k] = name
	}
	parentName := rs.nodes[p].status.Name
	sc := rs.childScope(p, ch)
	g := &group{limit: ch.MaxParallel, plan: ch.Plan, base: rs.nodes[p].status.Outputs, scope: sc, stored: map[int]bool{}}
	first := rs.plan.Graph.Grow(n)
	for k := range n {
		t := ch.Plan.Tasks[k]
		h, err := handlers.For(t.Kind)
		if err != nil {
			return nil
		}
		idx := first + k
		name := parentName + "." + names[k]
		rs.plan.Tasks = append(rs.plan.Tasks, t)
		rs.plan.Index[name] = idx
		rs.kinds = append(rs.kinds, rs.kindTable.of(h, &rs.plan.Tasks[idx]))
		ns, stored := rs.childNode(name, p, t.Kind)
		rs.nodes = append(rs.nodes, ns)
		g.stored[idx] = stored
		rs.parent = append(rs.parent, p)
		rs.scopes = append(rs.scopes, rs.itemScope(sc, ch, k))
		rs.pendingUp = append(rs.pendingUp, 0)
		g.children = append(g.children, idx)
		g.statuses = append(g.statuses, &rs.nodes[idx].status)
	}
	for k := range n {
		for _, u := range ch.Plan.Graph.Upstream(k) {
			rs.plan.Graph.AddEdge(first+u, first+k)
		}
		if len(ch.Plan.Graph.Upstream(k)) == 0 {
			g.roots = append(g.roots, first+k)
		}
	}
	g.counts.Total = n
	g.counts.Pending = n
	return g
}

// childNode is a new child's status: as stored, if an earlier engine or
// try of the run made it, else Pending.
func (rs *runState) childNode(name string, parent int, kind apiv1.NodeKind) (*nodeState, bool) {
	var ns *nodeState
	at, stored := rs.stored[name]
	if stored {
		ns = new(nodeState)
		loadNode(ns, name, rs.run, at)
		delete(rs.stored, name)
	} else {
		ns = &nodeState{status: apiv1.NodeStatus{Name: name, Phase: apiv1.PhasePending}}
	}
	ns.status.Kind, ns.status.Parent = kind, rs.nodes[parent].status.Name
	return ns, stored
}

// childScope is where group p's children look names up.
func (rs *runState) childScope(p int, ch *node.Children) *scope {
	outer := rs.scopes[p]
	if outer == nil {
		outer = &scope{}
	}
	if !ch.Local {
		return &scope{prefix: outer.prefix, params: outer.params}
	}
	params := ch.Params
	if params == nil {
		params = outer.params
	}
	return &scope{prefix: rs.nodes[p].status.Name + ".", params: params}
}

// itemScope is child k's scope: the group's, with its item for a map.
func (rs *runState) itemScope(sc *scope, ch *node.Children, k int) *scope {
	if ch.Items == nil {
		return sc
	}
	return &scope{prefix: sc.prefix, params: sc.params, item: ch.Items[k], index: k}
}

// ownPlanCopy makes the run's plan its own before it grows: the compiled
// plan is shared and never changes.
func (rs *runState) ownPlanCopy() {
	if rs.ownPlan {
		return
	}
	p := *rs.plan
	p.Tasks = slices.Clone(p.Tasks)
	p.Index = make(map[string]int, len(rs.plan.Index))
	for k, v := range rs.plan.Index {
		p.Index[k] = v
	}
	p.Graph = rs.plan.Graph.Clone()
	rs.plan, rs.ownPlan = &p, true
}

// paramNames are the run's params' names.
func (rs *runState) paramNames() []string {
	var names []string
	for _, p := range rs.plan.Workflow.Spec.Params {
		names = append(names, p.Name)
	}
	return names
}

// release lets group p's next roots start, up to its cap. A root that
// ended before (an item that succeeded before kiln retry) takes no place
// under the cap: it will not end again to give its place back.
func (r *round) release(p int) {
	rs := r.rs
	g := rs.groups[p]
	if g == nil {
		return
	}
	for g.next < len(g.roots) && (g.limit == 0 || g.inflight < g.limit) {
		i := g.roots[g.next]
		g.next++
		if rs.nodes[i].status.Phase.Done() {
			continue
		}
		g.inflight++
		rs.unresolved = append(rs.unresolved, i)
	}
}

// childDone counts child i's end.
func (g *group) childDone(rs *runState, i int) {
	if len(rs.plan.Graph.Upstream(i)) == 0 {
		g.inflight--
	}
}

// countChild moves a child from phase was to phase now in its group's counts.
func (g *group) countChild(was, now apiv1.Phase) {
	g.add(was, -1)
	g.add(now, 1)
}

// add adds n to the count of phase p.
func (g *group) add(p apiv1.Phase, n int) {
	c := &g.counts
	switch p {
	case apiv1.PhasePending, apiv1.PhaseWaiting:
		c.Pending += n
	case apiv1.PhaseSucceeded:
		c.Succeeded += n
	case apiv1.PhaseFailed:
		c.Failed += n
	case apiv1.PhaseSkipped:
		c.Skipped += n
	case apiv1.PhaseCancelled:
		c.Cancelled += n
	default:
		c.Running += n
	}
}

func pendingPhase(p apiv1.Phase) bool { return p == apiv1.PhasePending || p == apiv1.PhaseWaiting }

// gather asks group p's handler how the group went, and ends it once
// that is final and its children have ended. A group that can no longer
// succeed starts none of its children that have not started.
func (c *Controller) gather(r *round, p int) {
	rs := r.rs
	g := rs.groups[p]
	ns := rs.nodes[p]
	if g == nil || ns.status.Phase.Done() {
		return
	}
	view := &node.Group{
		Counts: g.counts, Children: g.statuses, Plan: g.plan, Base: g.base,
		Expand: func(s string) (string, error) { return scopeInputs(&c.cfg, rs, g.scope).Expand(s) },
		Artifact: func(k int, name string) (string, bool) {
			return scopeInputs(&c.cfg, rs, nil).output(rs.nodes[g.children[k]].status.Name, "artifacts", name)
		},
	}
	counts := g.counts
	ns.status.Children = &counts
	r.nodes[p] = true
	v, decided := rs.kinds[p].grouper.Gather(&rs.plan.Tasks[p], view)
	if !decided {
		return
	}
	if !view.Done() {
		if !g.hopeless {
			g.hopeless = true
			r.skipUnstartedChildren(p)
		}
		return
	}
	delete(rs.groups, p)
	switch {
	case v.Phase == apiv1.PhaseSucceeded:
		ns.status.Outputs = v.Outputs
		r.setNode(p, apiv1.PhaseSucceeded, "Succeeded", "", childSummary(g.counts))
	case rs.stopping == apiv1.PhaseCancelling:
		r.setNode(p, apiv1.PhaseCancelled, "Cancelled", apiv1.CodeCancelled, rs.stopMsg)
	case rs.stopping != "" && g.counts.Failed == 0 && g.counts.Cancelled == 0:
		// nothing of its own failed: the run's stop left its children unstarted
		r.setNode(p, apiv1.PhaseSkipped, "Skipped", "", fmt.Sprintf("not finished: %s (%s)", rs.stopMsg, childSummary(g.counts)))
	default:
		r.failNode(p, v.Code, v.Message)
	}
}

// skipUnstartedChildren skips group p's children that have not started,
// and its roots not yet released.
func (r *round) skipUnstartedChildren(p int) {
	rs := r.rs
	g := rs.groups[p]
	why := fmt.Sprintf("not started: task %s can no longer succeed", rs.nodes[p].status.Name)
	for _, k := range g.children {
		if pendingPhase(rs.nodes[k].status.Phase) {
			r.skipNode(k, "", why)
		}
	}
	g.next = len(g.roots)
}

func childSummary(c apiv1.ChildCounts) string {
	s := strconv.Itoa(c.Succeeded) + " of " + strconv.Itoa(c.Total) + " " + plural(c.Total, "child") + " succeeded"
	if c.Failed > 0 {
		s += ", " + strconv.Itoa(c.Failed) + " failed"
	}
	if c.Skipped > 0 {
		s += ", " + strconv.Itoa(c.Skipped) + " skipped"
	}
	return s
}

// restore rebuilds, after a restart, the children of the groups that
// were running, from what each recorded, and picks up where they were.
func (c *Controller) restore(ctx context.Context, rs *runState) error {
	r := newRound(rs, now())
	for i := 0; i < len(rs.nodes); i++ {
		ns := rs.nodes[i]
		if ns.status.Phase != apiv1.PhaseRunning || ns.status.Expansion == nil || rs.kinds[i].grouper == nil {
			continue
		}
		c.expand(ctx, r, i, ns.status.Expansion)
		g := rs.groups[i]
		if g == nil {
			return fmt.Errorf("rebuilding the children of %s: %s", ns.status.Name, ns.status.Message)
		}
		first := len(rs.nodes) - len(g.children)
		for k := first; k < len(rs.nodes); k++ {
			rs.indexNode(k, r.now)
			g.countChild(apiv1.PhasePending, rs.nodes[k].status.Phase)
		}
		for g.next < len(g.roots) && rs.nodes[g.roots[g.next]].status.Phase != apiv1.PhasePending {
			if !rs.nodes[g.roots[g.next]].status.Phase.Done() {
				g.inflight++
			}
			g.next++
		}
	}
	return nil
}

// runLibrary is the workflows run keeps, as a library.
func runLibrary(run *apiv1.Run) workflow.Library {
	return library(&workflow.Document{File: run.Source, Kind: run.Kind, Name: run.Name}, run.Subworkflows)
}
