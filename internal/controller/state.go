package controller

import (
	"container/list"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
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
	nodes []*nodeState
	done  chan struct{}

	pendingUp []int        // per node: upstream nodes not yet Succeeded
	ready     *list.List   // of int: nodes whose upstream all succeeded, not started
	active    map[int]bool // nodes with an attempt running
	retrying  map[int]bool // nodes waiting for their next attempt
	queued    map[int]bool // gangs waiting for room under a schedule timeout
	suspended map[int]bool // training jobs stopped on request
	finished  int          // nodes in a final phase
	failed    []string     // names of failed nodes, in order
	stopping  apiv1.Phase  // Failing or Cancelling once the run stops
	stopCode  apiv1.Code   // why it stops
	stopMsg   string       // and in words
	deadline  time.Time    // run timeout, zero if none

	// Counts published by the run's worker after each round, for metrics.
	running, backingOff, parked atomic.Int64

	mu         sync.Mutex
	dirty      map[int]*report // nodes to observe; the report, if the backend sent one
	resync     bool            // observe every active node
	cancelReq  bool
	suspendReq bool // the run's training jobs should be suspended
}

// report is an exit the backend announced for attempt number attempt.
type report struct {
	attempt int
	status  job.Status
}

// nodeState is one task of a run.
type nodeState struct {
	status  apiv1.NodeStatus    // attempts excluded
	attempt apiv1.AttemptStatus // current or last attempt; Number 0 if none
	spec    *job.Spec           // current attempt's spec, once built
	stop    apiv1.Code          // why the current attempt is being stopped
	waiting bool                // a Waiting event was written
	// waitingSince is when the node first waited for room; the gang's
	// schedule timeout counts from it.
	waitingSince time.Time
	// failures counts failed attempts; suspended attempts do not count
	// against the retry budget.
	failures int
}

// attemptID is the deterministic ID of attempt n of node in run.
func attemptID(run apiv1.RunID, node string, n int) string {
	return fmt.Sprintf("%s/%s/%d", run, node, n)
}

// parseAttemptID splits an attempt ID into run, node and number.
func parseAttemptID(id string) (apiv1.RunID, string, int, bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 {
		return "", "", 0, false
	}
	n, err := strconv.Atoi(parts[2])
	return apiv1.RunID(parts[0]), parts[1], n, err == nil
}

// newRunState builds the engine's copy of run from what the store holds.
func newRunState(run *apiv1.Run, plan *workflow.Plan) *runState {
	n := len(plan.Tasks)
	rs := &runState{
		run: run, plan: plan, nodes: make([]*nodeState, n), done: make(chan struct{}),
		pendingUp: make([]int, n), ready: list.New(), active: map[int]bool{}, retrying: map[int]bool{}, queued: map[int]bool{}, suspended: map[int]bool{},
		dirty: map[int]*report{},
	}
	if plan.Timeout > 0 && run.Status.StartedAt != nil {
		rs.deadline = run.Status.StartedAt.Add(plan.Timeout)
	}
	for i := range plan.Tasks {
		ns := &nodeState{status: apiv1.NodeStatus{Name: plan.Tasks[i].Spec.Name, Phase: apiv1.PhasePending}}
		if i < len(run.Status.Nodes) {
			ns.status = run.Status.Nodes[i]
			if k := len(ns.status.Attempts); k > 0 {
				ns.attempt = ns.status.Attempts[k-1]
			}
			for _, a := range ns.status.Attempts {
				if a.Phase == apiv1.PhaseFailed && a.Number > ns.status.AttemptBase {
					ns.failures++
				}
			}
			ns.status.Attempts = nil
		}
		rs.nodes[i] = ns
	}
	rs.suspendReq = run.Suspend
	rs.index()
	return rs
}

// index derives the working sets (ready, active, retrying, counts) from
// the nodes' phases.
func (rs *runState) index() {
	for i, ns := range rs.nodes {
		for _, up := range rs.plan.Graph.Upstream(i) {
			if rs.nodes[up].status.Phase != apiv1.PhaseSucceeded {
				rs.pendingUp[i]++
			}
		}
		switch p := ns.status.Phase; {
		case p.Done():
			rs.finished++
			if p == apiv1.PhaseFailed {
				rs.failed = append(rs.failed, ns.status.Name)
			}
		case p == apiv1.PhaseRunning:
			rs.active[i] = true
			rs.dirty[i] = nil
		case p == apiv1.PhaseRetrying:
			rs.retrying[i] = true
		case p == apiv1.PhaseSuspended:
			rs.suspended[i] = true
		case rs.pendingUp[i] == 0:
			rs.ready.PushBack(i)
		}
	}
	switch rs.run.Status.Phase {
	case apiv1.PhaseFailing, apiv1.PhaseCancelling:
		rs.stopping, rs.stopCode, rs.stopMsg = rs.run.Status.Phase, rs.run.Status.Code, rs.run.Status.Message
	}
}

// markDirty asks the next round to observe node i.
func (rs *runState) markDirty(i int) {
	rs.mu.Lock()
	if _, ok := rs.dirty[i]; !ok {
		rs.dirty[i] = nil
	}
	rs.mu.Unlock()
}

// markExited records the backend's report that attempt n of node i ended.
func (rs *runState) markExited(i, n int, st job.Status) {
	rs.mu.Lock()
	rs.dirty[i] = &report{attempt: n, status: st}
	rs.mu.Unlock()
}

// takeWork returns and clears what other goroutines asked of the run.
func (rs *runState) takeWork() (dirty map[int]*report, cancel, suspend bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	dirty, rs.dirty = rs.dirty, map[int]*report{}
	if rs.resync {
		for i := range rs.active {
			if _, ok := dirty[i]; !ok {
				dirty[i] = nil
			}
		}
		rs.resync = false
	}
	return dirty, rs.cancelReq, rs.suspendReq
}
