package controller

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/who"
	"kiln.dev/kiln/internal/workflow"
)

// SubmitParams is a run to create.
type SubmitParams struct {
	Plan *workflow.Plan
	// Params are the values of every declared parameter.
	Params map[string]string
	// Source is the workflow's file, as the submitter named it.
	Source string
	// WorkDir is the directory tasks start in (see apiv1.Run.WorkDir).
	WorkDir string
	// Suspend creates the run with its training jobs suspended.
	Suspend bool
	// Project owns the run; default "default".
	Project string
	// Cache is how the run uses the cache; empty means on.
	Cache apiv1.CacheMode
	// RerunOf and Preset make the run a rerun (see Rerun): its source,
	// and its nodes that start reused or left out instead of Pending.
	RerunOf *apiv1.RerunOf
	Preset  []apiv1.NodeStatus
	// Warnings are recorded as the run's first events (FieldIgnored): what
	// was submitted that the backend will not act on.
	Warnings []string
	// ID, if set, is the run's ID (a party's part of a federated run has
	// the ID the federation gives it); a taken ID is store.ErrConflict.
	ID apiv1.RunID
	// Federation says how the run takes part in a federation, if it does.
	Federation *apiv1.FederationInfo
	// Key, if not nil, is stored with the run; a key the project holds
	// already refuses the run with store.ErrKeyTaken.
	Key *store.NewSubmitKey
	// Commit, if not nil, is asked just before the run is saved: false
	// means the submitter no longer waits for it, and nothing is saved
	// (KLN-4062).
	Commit func() bool
}

// Submit checks that every task fits the pool, saves a new run owned by
// this engine and starts working on it. It returns the run as saved,
// before its first round. Nothing is saved when it fails.
func (rt *Runs) Submit(ctx context.Context, p SubmitParams) (*apiv1.Run, error) {
	if p.Federation == nil || !p.Federation.Part { // a part's shares are refused when reserved (KLN-7010)
		if err := p.Plan.CheckFits(rt.cfg.Pool.Capacity()); err != nil {
			return nil, err
		}
	}
	wf := p.Plan.Workflow
	nodes := make([]string, len(p.Plan.Tasks))
	kinds := make([]apiv1.NodeKind, len(p.Plan.Tasks))
	for i, t := range p.Plan.Tasks {
		nodes[i], kinds[i] = t.Spec.Name, t.Kind
	}
	subs := subworkflows(p.Plan)
	for try := 0; ; try++ {
		id := p.ID
		if id == "" {
			id = apiv1.RunID(wf.Metadata.Name + "-" + suffix())
		}
		run := apiv1.Run{
			ID: id, Name: wf.Metadata.Name, Kind: wf.Kind, Federation: federationOf(p.Federation, id),
			Labels: wf.Metadata.Labels, Workflow: wf, Subworkflows: subs, Params: p.Params, Source: p.Source, WorkDir: p.WorkDir,
			CreatedAt: now(), Suspend: p.Suspend, Project: p.Project, Cache: p.Cache, RerunOf: p.RerunOf,
			Status: apiv1.RunStatus{Phase: apiv1.PhasePending, Nodes: presetNodes(p.Plan, p.Preset)},
		}
		rs, err := newRunState(&run, p.Plan, rt.cfg.Handlers, now())
		if err != nil {
			return nil, err
		}
		if p.Commit != nil && !p.Commit() {
			return nil, errSubmitLate
		}
		err = rt.cfg.Store.CreateRun(ctx, store.CreateRunParams{
			Run: run, Nodes: nodes, Kinds: kinds, Preset: p.Preset, Owner: rt.lead.owner(), Events: warningEvents(p.Warnings, run.CreatedAt),
			LeaseUntil: rt.lead.leaseUntil(now()), Term: rt.lead.Term(), Key: p.Key,
		})
		if errors.Is(err, store.ErrConflict) && try < 5 && p.ID == "" {
			continue
		}
		if err != nil {
			rt.lead.wasFenced(err)
			return nil, fmt.Errorf("saving the run: %w", err)
		}
		saved := run // rs.run changes once the run is tracked
		saved.Status.Nodes = make([]apiv1.NodeStatus, len(rs.nodes))
		for i, ns := range rs.nodes {
			saved.Status.Nodes[i] = ns.status
		}
		if rt.lead.Following() {
			return &saved, nil // the leader claims it
		}
		return &saved, rt.track(ctx, rs)
	}
}

// errSubmitLate refuses to save a run its submitter stopped waiting for.
var errSubmitLate = &apiv1.Error{
	Code:    apiv1.CodeSubmitDeadline,
	Message: "the submission was not checked in time to answer before the server's write timeout; no run was created",
}

// suffix returns five random lowercase letters and digits.
func suffix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Claim takes over unfinished runs whose owner is gone (all such runs when
// ids is empty) and starts working on them. It returns the runs taken,
// and those of its own whose leases it renewed.
func (rt *Runs) Claim(ctx context.Context, ids []apiv1.RunID, isDead func(owner string) bool) ([]apiv1.RunID, error) {
	claims, err := rt.claim(ctx, ids, isDead)
	out := make([]apiv1.RunID, 0, len(claims))
	for _, c := range claims {
		out = append(out, c.ID)
	}
	return out, err
}

// Adopt is Claim of every run, and returns only the runs it took from
// another engine: not those it already owned, in memory or in the store
// alone (a run submitted to it while it claimed).
func (rt *Runs) Adopt(ctx context.Context, isDead func(owner string) bool) ([]apiv1.RunID, error) {
	claims, err := rt.claim(ctx, nil, isDead)
	var adopted []apiv1.RunID
	for _, c := range claims {
		if c.From != rt.cfg.Owner {
			adopted = append(adopted, c.ID)
		}
	}
	return adopted, err
}

func (rt *Runs) claim(ctx context.Context, ids []apiv1.RunID, isDead func(owner string) bool) ([]store.Claim, error) {
	if rt.lead.Following() {
		return nil, nil
	}
	claimed, err := rt.cfg.Store.ClaimRuns(ctx, store.ClaimRunsParams{
		Owner: rt.cfg.Owner, Now: now(),
		Until: now().Add(rt.cfg.LeaseTTL), IDs: ids, IsDead: isDead, Term: rt.lead.Term(),
	})
	if err != nil {
		rt.lead.wasFenced(err)
		return nil, fmt.Errorf("claiming runs: %w", err)
	}
	for _, c := range claimed {
		if rt.Owns(c.ID) {
			continue
		}
		if err := rt.load(ctx, c.ID); err != nil {
			return claimed, err
		}
	}
	return claimed, nil
}

// Cancel records a cancel request in the store and acts on it at once if
// this engine owns the run. A run that has ended cannot be cancelled:
// KLN-4010.
func (rt *Runs) Cancel(ctx context.Context, id apiv1.RunID) error {
	if err := rt.cfg.Store.RequestCancel(ctx, id, who.Asks(ctx)); err != nil {
		return runError(id, err, "only a run that has not ended can be cancelled")
	}
	rt.request(id, func(rs *runState) { rs.cancelReq = true })
	return nil
}

// Stop records a stop request in the store and acts on it at once if
// this engine owns the run: its running tasks are stopped, nothing else
// starts, its exit handlers run and it ends Failed (KLN-3020), as argo
// stop does. A run that has ended cannot be stopped: KLN-4010.
func (rt *Runs) Stop(ctx context.Context, id apiv1.RunID) error {
	if err := rt.cfg.Store.RequestStop(ctx, id, who.Asks(ctx)); err != nil {
		return runError(id, err, "only a run that has not ended can be stopped")
	}
	rt.request(id, func(rs *runState) { rs.stopReq = true })
	return nil
}

// runError turns the store's refusal of a request about run id into the
// coded error a user sees.
func runError(id apiv1.RunID, err error, rule string) error {
	var pe *store.PhaseError
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &apiv1.Error{Code: apiv1.CodeRunNotFound, Object: "Run/" + string(id), Message: "no such run"}
	case errors.As(err, &pe):
		return &apiv1.Error{Code: apiv1.CodeRunPhase, Object: "Run/" + string(id), Message: fmt.Sprintf("the run is %s; %s", pe.Phase, rule)}
	}
	return err
}

// load reads run id from the store and starts working on it.
func (rt *Runs) load(ctx context.Context, id apiv1.RunID) error {
	run, err := rt.cfg.Store.GetRun(ctx, id)
	if err != nil {
		return fmt.Errorf("loading run %s: %w", id, err)
	}
	doc := &workflow.Document{File: run.Source, Kind: run.Kind, Name: run.Name}
	plan, err := workflow.CompileWith(doc, run.Workflow, nil, library(doc, run.Subworkflows))
	if err != nil {
		return fmt.Errorf("compiling run %s: %w", id, err)
	}
	rs, err := newRunState(run, plan, rt.cfg.Handlers, now())
	if err != nil {
		return fmt.Errorf("loading run %s: %w", id, err)
	}
	if err := rt.restore(ctx, rs); err != nil {
		return fmt.Errorf("loading run %s: %w", id, err)
	}
	if err := rt.parts.load(ctx, rs); err != nil {
		return fmt.Errorf("loading run %s: %w", id, err)
	}
	return rt.track(ctx, rs)
}

// subworkflows lists the workflows a run of plan keeps, by name.
func subworkflows(plan *workflow.Plan) []*apiv1.Workflow {
	uses := plan.Uses()
	names := make([]string, 0, len(uses))
	for n := range uses {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*apiv1.Workflow, len(names))
	for i, n := range names {
		out[i] = uses[n]
	}
	return out
}

// library is a run's subworkflows as a workflow.Library.
func library(doc *workflow.Document, subs []*apiv1.Workflow) workflow.Library {
	lib := workflow.Library{}
	for _, wf := range subs {
		lib[wf.Metadata.Name] = workflow.LibraryEntry{Doc: doc, Workflow: wf}
	}
	return lib
}

// warningEvents are a submission's warnings as run events.
func warningEvents(warnings []string, at time.Time) []apiv1.Event {
	var out []apiv1.Event
	for _, w := range warnings {
		out = append(out, apiv1.Event{Phase: apiv1.PhasePending, Reason: "FieldIgnored", Message: w, Time: at})
	}
	return out
}

// federationOf is how run id takes part in a federation, as f says: a run
// submitted to its initiator is the federated run itself.
func federationOf(f *apiv1.FederationInfo, id apiv1.RunID) *apiv1.FederationInfo {
	if f == nil || f.Run != "" {
		return f
	}
	c := *f
	c.Run = id
	return &c
}
