package controller

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
)

// reports reads the progress reports of running nodes through a backend
// that can read an attempt's files; with one that cannot, nothing.
type reports struct {
	files backend.FileReader // nil: the backend reads no files
	log   *slog.Logger
}

func newReports(b backend.Backend, log *slog.Logger) *reports {
	fr, _ := backend.As[backend.FileReader](b)
	return &reports{files: fr, log: log}
}

const (
	// progressPoll is how often the engine reads the progress report of a
	// running node that reports one.
	progressPoll = 2 * time.Second
	// progressLimit is the largest progress report read.
	progressLimit = 64 << 10
)

// Run progress (apiv1.RunProgress) counts every node but those that
// expanded into children: a group counts as one until it expands, then
// through its children. The engine keeps the count as nodes change phase,
// so a round costs the same with ten thousand children, and saves it
// with the run's status in the rounds that change it.

// countProgress counts the run's nodes as loaded, the children the store
// holds of groups not rebuilt yet included.
func (rs *runState) countProgress() {
	var p apiv1.RunProgress
	for _, ns := range rs.nodes {
		if ns.status.Children == nil {
			p.Add(ns.status.Phase, 1)
		}
	}
	for _, k := range rs.stored {
		if n := rs.run.Status.Nodes[k]; n.Children == nil {
			p.Add(n.Phase, 1)
		}
	}
	rs.progress = p
}

// moveProgress counts node i's move from phase was to phase now.
func (rs *runState) moveProgress(i int, was, now apiv1.Phase) {
	if rs.nodes[i].status.Children == nil {
		rs.progress.Move(was, now)
	}
}

// expandProgress stops counting node i, which expands: its children count
// instead (each new one as it is added).
func (rs *runState) expandProgress(i int) {
	if ns := rs.nodes[i]; ns.status.Children == nil {
		rs.progress.Add(ns.status.Phase, -1)
	}
}

// saveProgress has the round save the run's progress if it changed.
func (r *round) saveProgress() {
	st := &r.rs.run.Status
	if p := r.rs.progress; st.Progress == nil || *st.Progress != p {
		st.Progress = &p
		r.runDirty = true
	}
}

// read reads the reports of the running nodes that report their
// progress (node.Progressor, looked up with the kind), each at most every progressPoll, through a
// backend that can read an attempt's files. A report that is missing,
// too large or not valid changes nothing: the last good one stays, and
// the node runs on.
func (p *reports) read(ctx context.Context, r *round) {
	if p.files == nil {
		return
	}
	rs := r.rs
	for i := range rs.progressAt {
		if !rs.active[i] {
			delete(rs.progressAt, i)
		}
	}
	for i := range rs.active {
		if rs.kinds[i].progressor == nil || r.now.Sub(rs.lastRead(i)) < progressPoll {
			continue
		}
		if rs.progressAt == nil {
			rs.progressAt = map[int]time.Time{}
		}
		rs.progressAt[i] = r.now
		p.report(ctx, r, i)
	}
}

// last reads node i's progress report once more as its attempt ends,
// so that a report written just before the exit is kept.
func (p *reports) last(ctx context.Context, r *round, i int) {
	if p.files != nil && r.rs.kinds[i].progressor != nil {
		p.report(ctx, r, i)
	}
}

// report reads node i's progress report and applies it.
func (p *reports) report(ctx context.Context, r *round, i int) {
	rs := r.rs
	kind := rs.kinds[i].progressor
	ns := rs.nodes[i]
	id := rs.attemptID(i, ns.attempt.Number)
	data, err := p.files.ReadFile(ctx, id, kind.ProgressFile(&rs.plan.Tasks[i]), progressLimit)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.log.Debug("progress report not read", "attempt", id, "error", err)
		}
		return
	}
	before := ns.status
	if kind.Progress(&ns.status, data, r.now) {
		r.nodes[i] = true
		r.announce(i, &before)
	}
}

// lastRead is when node i's progress report was last read: at first,
// when its attempt started, so that a task shorter than a poll is read
// once, as it ends (lastReport).
func (rs *runState) lastRead(i int) time.Time {
	if t, ok := rs.progressAt[i]; ok {
		return t
	}
	return startOf(rs.nodes[i].attempt.StartedAt)
}

// wake is when the run must read its nodes' progress reports again.
func (p *reports) wake(rs *runState, consider func(time.Time)) {
	if p.files == nil {
		return
	}
	for i := range rs.active {
		if rs.kinds[i].progressor != nil {
			consider(rs.lastRead(i).Add(progressPoll))
		}
	}
}

// announce records, as events, the news node i's kind finds between its
// status before a progress report and now.
func (r *round) announce(i int, before *apiv1.NodeStatus) {
	a := r.rs.kinds[i].announcer
	if a == nil {
		return
	}
	ns := r.rs.nodes[i]
	for _, msg := range a.Announce(before, &ns.status) {
		r.events = append(r.events, apiv1.Event{
			Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: ns.status.Phase, Reason: "Progress", Message: msg, Time: r.now,
		})
	}
}
