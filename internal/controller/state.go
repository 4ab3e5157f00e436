package controller

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/node"
	"kiln.dev/kiln/internal/workflow"
)

// runState is the engine's copy of one run it owns. It is loaded from the
// store when the run is claimed and every change to it is written to the
// store in the round that makes it, so it never holds anything the store
// does not. Only the worker reconciling the run touches it, except the
// fields under mu, which other goroutines set to wake the run.
type runState struct {
	run   *apiv1.Run
	plan  *workflow.Plan
	kinds []*kind // per node: its handler and what it can do, shared (see kindTable)
	// kindTable holds the kinds the run's nodes share.
	kindTable kindTable
	nodes     []*nodeState
	done      chan struct{}

	pendingUp  []int          // per node: upstream nodes not yet Succeeded
	ready      *readyQueue    // nodes whose upstream all succeeded, not started
	fresh      []int          // nodes queued since the last admission, maybe not yet shown waiting
	active     map[int]bool   // nodes with an attempt running
	retrying   map[int]bool   // nodes waiting for their next attempt
	waits      waitTexts      // why nodes wait for room, each text written once
	queued     map[int]bool   // waiting nodes with an admission timeout
	suspended  map[int]bool   // nodes stopped while the run is suspended
	groups     map[int]*group // nodes running children, by node
	gates      map[int]bool   // gates waiting
	cacheWait  map[int]bool   // ready nodes waiting for another node computing their cache key
	parent     []int          // per node: its group node, -1 at the top
	scopes     []*scope       // per node: where its templates look names up; nil at the top
	unresolved []int          // pending nodes whose upstream may have ended: check their trigger rules
	ownPlan    bool           // plan is the run's own copy, grown with children
	compiled   *workflow.Plan // the plan as compiled, before it grew
	stored     map[string]int // stored nodes that are not in the plan (children), by name: their index in run.Status.Nodes
	finished   int            // nodes in a final phase
	failed     []string       // names of failed nodes, in order
	stopping   apiv1.Phase    // Failing or Cancelling once the run stops
	stopCode   apiv1.Code     // why it stops
	stopMsg    string         // and in words
	stopLate   bool           // a stop came once only the exit handler ran: it runs on, suspended or not
	suspendLog bool           // the suspend request last recorded as an event
	owed       []int          // attempts being stopped when the run was loaded: stop them again

	progress   apiv1.RunProgress // the run's nodes counted by phase (see progress.go)
	progressAt map[int]time.Time // running nodes that report progress: when their report was last read
	growAt     map[int]time.Time // running flexible gangs: when they last asked for one more host
	part       *partState        // nil unless the run is a party's part of a federated run

	// Counts published by the run's worker after each round, for metrics.
	running, backingOff, parked atomic.Int64

	mu    sync.Mutex
	dirty map[int]*report // nodes to observe; the report, if the backend sent one
	// exited are the backend's reports by node name: its watcher may not
	// read the plan, which the round grows (a group's children), so the
	// round looks the names up in takeWork.
	exited     map[string]*report
	resync     bool // observe every active node
	cancelReq  bool
	stopReq    bool
	suspendReq bool              // nodes that suspend should be suspended
	preempts   map[string]string // attempts other runs' nodes preempted, and by whom (quota.go)

	preemptedBy map[int]string // nodes whose attempt is being stopped for a preemption, and by whom
}

// kind is a node's handler and the optional capabilities it has, looked
// up once when the run is loaded.
type kind struct {
	node.Handler
	reporter  node.Reporter // nil if the kind reports nothing more
	networked node.Networked
	versioned node.Versioned // nil unless the result comes from outside the run
	grouper   node.Grouper   // nil unless the node runs children
	waiter    node.Waiter    // nil unless the node waits instead of running
	// progressor is nil unless the node's processes report their progress.
	progressor node.Progressor
	announcer  node.Announcer // nil unless its reports make events
	suspends   bool
	// framework names the framework the node's jobs are counted under in
	// the metrics, "" for a node that runs none.
	framework string
	// attempts says the node runs attempts of its own (admitted, launched, judged).
	attempts bool
}

// kindTable holds one copy of each kind a run's nodes have: a fan-out of
// 100,000 command tasks keeps one kind, not 100,000 of 160 bytes.
type kindTable map[kind]*kind

// of is kindOf(h, t), the table's copy when it holds one. A handler
// whose type cannot be compared gets a copy of its own.
func (kt *kindTable) of(h node.Handler, t *workflow.Task) *kind {
	k := kindOf(h, t)
	if !reflect.TypeOf(h).Comparable() {
		return &k
	}
	if shared, ok := (*kt)[k]; ok {
		return shared
	}
	if *kt == nil {
		*kt = kindTable{}
	}
	(*kt)[k] = &k
	return &k
}

func kindOf(h node.Handler, t *workflow.Task) kind {
	k := kind{Handler: h}
	k.reporter, _ = h.(node.Reporter)
	k.networked, _ = h.(node.Networked)
	k.versioned, _ = h.(node.Versioned)
	k.grouper, _ = h.(node.Grouper)
	k.waiter, _ = h.(node.Waiter)
	k.progressor, _ = h.(node.Progressor)
	k.announcer, _ = h.(node.Announcer)
	k.attempts = k.waiter == nil && (k.grouper == nil || k.grouper.RunsFirst(t))
	if s, ok := h.(node.Suspender); ok {
		k.suspends = s.Suspends(t)
	}
	if f, ok := h.(node.Framed); ok {
		k.framework = f.Framework(t)
	}
	return k
}

// report is an exit the backend announced for attempt number attempt.
type report struct {
	attempt int
	status  job.Status
}

// nodeState is one node of a run.
type nodeState struct {
	status  apiv1.NodeStatus    // attempts excluded
	attempt apiv1.AttemptStatus // current or last attempt; Number 0 if none
	spec    *job.Spec           // current attempt's spec, once built
	stop    apiv1.Code          // why the current attempt is being stopped
	waiting bool                // shown Waiting since it last became ready
	// waitingSince is when the node first waited for room; its admission
	// timeout counts from it.
	waitingSince time.Time
	// spent is what the node's failures spent of its retries and of the
	// system budget; attempts the engine stopped spend neither.
	spent budget
	// launched is when the launch of an attempt of the node returned,
	// set by the goroutine that launched it.
	launched atomic.Pointer[launched]
}

// attemptID is the ID of attempt n of node i.
func (rs *runState) attemptID(i, n int) job.AttemptID {
	return job.AttemptID{Run: string(rs.run.ID), Node: rs.nodes[i].status.Name, Number: n}
}

// waiter names node i in the pool's queue.
func (rs *runState) waiter(i int) string {
	return string(rs.run.ID) + "/" + rs.nodes[i].status.Name
}

// waiters names the run's nodes that wait in the pool's queue.
func (rs *runState) waiters() []string {
	var out []string
	for i, ns := range rs.nodes {
		if ns.status.Phase == apiv1.PhaseWaiting {
			out = append(out, rs.waiter(i))
		}
	}
	return out
}

// newRunState builds the engine's copy of run from what the store holds.
// handlers finds each node's handler; a kind without one is an error.
func newRunState(run *apiv1.Run, plan *workflow.Plan, handlers *node.Registry, now time.Time) (*runState, error) {
	n := len(plan.Tasks)
	rs := &runState{
		run: run, plan: plan, kinds: make([]*kind, n), nodes: make([]*nodeState, n), done: make(chan struct{}),
		pendingUp: make([]int, n), ready: newReadyQueue(), active: map[int]bool{}, retrying: map[int]bool{},
		queued: map[int]bool{}, suspended: map[int]bool{}, dirty: map[int]*report{},
		groups: map[int]*group{}, gates: map[int]bool{}, cacheWait: map[int]bool{}, parent: make([]int, n), scopes: make([]*scope, n),
		stored: map[string]int{}, compiled: plan, part: newPartState(run),
	}
	slab := make([]nodeState, n) // one allocation for the plan's nodes, not one each
	for i := range plan.Tasks {
		h, err := handlers.For(plan.Tasks[i].Kind)
		if err != nil {
			return nil, err
		}
		rs.kinds[i] = rs.kindTable.of(h, &plan.Tasks[i])
		rs.nodes[i] = &slab[i]
		loadNode(rs.nodes[i], plan.Tasks[i].Spec.Name, run, i)
		rs.nodes[i].status.Kind = plan.Tasks[i].Kind
		rs.parent[i] = -1
	}
	for k := n; k < len(run.Status.Nodes); k++ {
		rs.stored[run.Status.Nodes[k].Name] = k
	}
	rs.suspendReq, rs.suspendLog = run.Suspend, run.Suspend
	rs.index(now)
	rs.countProgress()
	return rs, nil
}

// loadNode reads into ns, a zero nodeState, node i of run as stored: its
// current attempt, and what its failures since the run's last retry
// spent.
func loadNode(ns *nodeState, name string, run *apiv1.Run, i int) {
	ns.status = apiv1.NodeStatus{Name: name, Phase: apiv1.PhasePending}
	if i >= len(run.Status.Nodes) {
		return
	}
	ns.status = run.Status.Nodes[i]
	if ns.status.Phase == "" {
		ns.status.Phase = apiv1.PhasePending
	}
	if k := len(ns.status.Attempts); k > 0 {
		ns.attempt = ns.status.Attempts[k-1]
	}
	for _, a := range ns.status.Attempts {
		if a.Phase == apiv1.PhaseFailed && a.Number > ns.status.AttemptBase {
			ns.spent = ns.spent.spend(failure{system: a.System})
		}
	}
	ns.status.Attempts = nil
}

// index derives the working sets (ready, active, retrying, counts) from
// the nodes' phases, and why attempts found running must be stopped.
func (rs *runState) index(now time.Time) {
	switch rs.run.Status.Phase {
	case apiv1.PhaseFailing, apiv1.PhaseCancelling:
		rs.stopping, rs.stopCode, rs.stopMsg = rs.run.Status.Phase, rs.run.Status.Code, rs.run.Status.Message
	}
	for i := range rs.nodes {
		rs.indexNode(i, now)
	}
}

// indexNode adds node i, as loaded, to the working sets.
func (rs *runState) indexNode(i int, now time.Time) {
	ns := rs.nodes[i]
	for _, up := range rs.plan.Graph.Upstream(i) {
		if !rs.nodes[up].status.Phase.Done() {
			rs.pendingUp[i]++
		}
	}
	switch p := ns.status.Phase; {
	case p.Done():
		rs.finished++
		if p == apiv1.PhaseFailed && rs.parent[i] < 0 {
			rs.failed = append(rs.failed, ns.status.Name)
		}
	case p == apiv1.PhaseRunning && ns.status.Gate != nil:
		rs.gates[i] = true
	case p == apiv1.PhaseRunning && !rs.kinds[i].attempts, p == apiv1.PhaseRunning && ns.attempt.Phase == apiv1.PhaseSucceeded:
		// expanded: the engine rebuilds its children (restore)
	case p == apiv1.PhaseRunning:
		rs.active[i] = true
		rs.dirty[i] = nil
		rs.adoptStop(i, now)
	case p == apiv1.PhaseRetrying:
		rs.retrying[i] = true
	case p == apiv1.PhaseSuspended:
		rs.suspended[i] = true
	case p == apiv1.PhaseWaiting && rs.plan.Tasks[i].Cache != nil:
		rs.cacheWait[i] = true // the cache decides again: it may hold the result now
	case p == apiv1.PhaseWaiting:
		rs.enqueue(i)
	case rs.pendingUp[i] == 0 && (rs.parent[i] < 0 || len(rs.plan.Graph.Upstream(i)) > 0):
		rs.unresolved = append(rs.unresolved, i) // a group releases its first children itself
	}
}

// adoptStop works out whether active node i's attempt was being stopped
// by the engine that had the run before, and owes it the stop.
func (rs *runState) adoptStop(i int, now time.Time) {
	ns := rs.nodes[i]
	timedOut := expired(deadline(startOf(ns.attempt.StartedAt), rs.plan.Tasks[i].Timeout), now)
	ns.stop = stopIntent(rs.run.Status.Phase, rs.run.Status.Code, rs.suspendReq, rs.kinds[i].suspends, timedOut)
	if ns.stop != "" {
		rs.owed = append(rs.owed, i)
	}
}

// enqueue makes node i ready to be admitted, behind its equals.
func (rs *runState) enqueue(i int) {
	rs.ready.push(i, rs.plan.Tasks[i].Spec.Priority)
	rs.fresh = append(rs.fresh, i)
}

// markDirty asks the next round to observe node i.
func (rs *runState) markDirty(i int) {
	rs.mu.Lock()
	if _, ok := rs.dirty[i]; !ok {
		rs.dirty[i] = nil
	}
	rs.mu.Unlock()
}

// markExited records the backend's report that attempt n of the node
// named node ended.
func (rs *runState) markExited(node string, n int, st job.Status) {
	rs.mu.Lock()
	if rs.exited == nil {
		rs.exited = map[string]*report{}
	}
	rs.exited[node] = &report{attempt: n, status: st}
	rs.mu.Unlock()
}

// takeWork returns and clears what other goroutines asked of the run.
func (rs *runState) takeWork() (dirty map[int]*report, asked requests) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	dirty, rs.dirty = rs.dirty, map[int]*report{}
	for name, rep := range rs.exited {
		if i, ok := rs.plan.Index[name]; ok { // the round's goroutine owns the plan
			dirty[i] = rep
		}
	}
	rs.exited = nil
	if rs.resync {
		for i := range rs.active {
			if _, ok := dirty[i]; !ok {
				dirty[i] = nil
			}
		}
		rs.resync = false
	}
	return dirty, requests{cancel: rs.cancelReq, stop: rs.stopReq, suspend: rs.suspendReq}
}

// requests are what users asked of a run, as the round sees them.
type requests struct {
	cancel, stop, suspend bool
}
