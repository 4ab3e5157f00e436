package controller

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/cache"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/store"
)

// results are what the engine keeps of succeeded tasks beyond their run:
// their results in the cache, for later runs to reuse, and their output
// artifacts in the artifact repository, for the tasks that read them
// where their files are gone.
type results struct {
	cfg *Config
	log *slog.Logger
}

// cachePoll is how often a node waiting for another run to compute the
// same result looks again.
const cachePoll = time.Second

// fromCache decides, for ready node i, what the cache does: it reuses a
// stored result (the node succeeds without running), or makes the node
// wait while another node computes the same key, or lets it run (the
// node then holds the key, and its result is stored when it succeeds).
// It reports whether the node was dealt with.
func (res *results) fromCache(ctx context.Context, r *round, i int) bool {
	rs, ns := r.rs, r.rs.nodes[i]
	t := &rs.plan.Tasks[i]
	if t.Cache == nil || res.cfg.Cache == nil {
		return false
	}
	if rs.run.Cache == apiv1.CacheOff {
		r.setCache(i, &apiv1.CacheStatus{Result: apiv1.CacheBypassed, Message: "the run does not use the cache (--cache off)"})
		return false
	}
	key, why, err := res.cacheKey(ctx, rs, i)
	switch {
	case err != nil: // its attempt fails to build too, and says why
		return false
	case why != "":
		r.setCache(i, &apiv1.CacheStatus{Result: apiv1.CacheUnavailable, Message: why})
		return false
	}
	st := &apiv1.CacheStatus{Key: key, Result: apiv1.CacheMiss}
	if rs.run.Cache == apiv1.CacheOverwrite {
		st.Result, st.Message = apiv1.CacheBypassed, "the run computes cached tasks afresh and replaces their results (--cache overwrite)"
	} else {
		e, miss, err := res.cfg.Cache.Lookup(ctx, key, t.Cache.MaxAge, r.now)
		if err != nil {
			res.log.Warn("looking up the cache; the task runs", "run", rs.run.ID, "task", ns.status.Name, "err", err)
			miss = err.Error()
		}
		if e != nil {
			return res.cacheHit(ctx, r, i, e, st)
		}
		st.Message = miss
		if miss != cache.NoResult && ns.status.Phase != apiv1.PhaseWaiting { // a stored result was not used: say why
			r.events = append(r.events, apiv1.Event{
				Node: ns.status.Name, Phase: ns.status.Phase, Reason: "CacheMiss", Time: r.now,
				Message: fmt.Sprintf("cache key %s: %s; the task runs", short(key), miss),
			})
		}
	}
	holder, err := res.cfg.Store.ReserveCacheKey(ctx, store.ReserveCacheKeyParams{
		Key: key, Holder: rs.waiter(i), Owner: res.cfg.Owner, Now: r.now, Until: r.now.Add(res.cfg.LeaseTTL),
	})
	if err == nil && holder != rs.waiter(i) {
		return r.waitForCache(i, st, holder)
	}
	if err == nil && st.Result == apiv1.CacheMiss && res.storedMeanwhile(ctx, r, i, st) {
		return true
	}
	delete(rs.cacheWait, i)
	r.setCache(i, st)
	return false
}

// storedMeanwhile uses a result another engine stored between node i's
// lookup and its reservation: that engine gave the key up as it stored
// it, so the reservation succeeded, and the task would run again. The
// key just taken is given back.
func (res *results) storedMeanwhile(ctx context.Context, r *round, i int, st *apiv1.CacheStatus) bool {
	rs := r.rs
	e, _, err := res.cfg.Cache.Lookup(ctx, st.Key, rs.plan.Tasks[i].Cache.MaxAge, r.now)
	if err != nil || e == nil || !res.cacheHit(ctx, r, i, e, st) {
		return false
	}
	if err := res.cfg.Store.ReleaseCacheKey(ctx, e.Key, rs.waiter(i)); err != nil {
		res.log.Warn("giving up a cache key; it frees itself with the engine's leases", "run", rs.run.ID, "task", rs.nodes[i].status.Name, "err", err)
	}
	return true
}

// setCache records what the cache did for node i.
func (r *round) setCache(i int, st *apiv1.CacheStatus) {
	r.rs.nodes[i].status.Cache = st
	r.nodes[i] = true
}

// cacheHit ends node i with the stored result e: its output parameters,
// and its artifacts placed where downstream tasks read them. A result
// whose artifacts cannot be placed is not reused.
func (res *results) cacheHit(ctx context.Context, r *round, i int, e *apiv1.CacheEntry, st *apiv1.CacheStatus) bool {
	rs, ns := r.rs, r.rs.nodes[i]
	if len(e.Artifacts) > 0 {
		dir, ok := res.hostOutputDir(rs.attemptID(i, 0))
		if !ok {
			return false
		}
		if err := res.cfg.Cache.Materialize(ctx, e, dir); err != nil {
			res.log.Warn("placing a cached result's artifacts; the task runs", "run", rs.run.ID, "task", ns.status.Name, "err", err)
			return false
		}
		st.OutputDir = dir
	}
	delete(rs.cacheWait, i)
	st.Result, st.Message, st.SourceRun, st.SourceNode = apiv1.CacheHit, "", e.SourceRun, e.SourceNode
	ns.status.Cache, ns.status.Outputs = st, e.Outputs
	ns.status.StartedAt = r.timePtr()
	r.runStarted()
	r.setNode(i, apiv1.PhaseSucceeded, "CacheHit", "", fmt.Sprintf("result reused from run %s (task %s), stored %s",
		e.SourceRun, e.SourceNode, e.CreatedAt.UTC().Format(time.RFC3339)))
	return true
}

// waitForCache makes node i wait while holder computes the same result.
func (r *round) waitForCache(i int, st *apiv1.CacheStatus, holder string) bool {
	rs, ns := r.rs, r.rs.nodes[i]
	rs.cacheWait[i] = true
	st.Message = "waiting for " + holder + ", which computes the same result"
	msg := fmt.Sprintf("waiting: %s is computing the same result (cache key %s); this task reuses it, or runs if that fails", holder, short(st.Key))
	if ns.status.Phase == apiv1.PhaseWaiting && ns.status.Message == msg {
		return true
	}
	ns.status.Cache = st
	r.setNode(i, apiv1.PhaseWaiting, "WaitingForCache", "", msg)
	return true
}

// cacheWaits looks again at the nodes waiting for another run's result.
func (res *results) cacheWaits(ctx context.Context, r *round) {
	for i := range r.rs.cacheWait {
		if r.rs.stopping != "" && !r.rs.runsOnFailure(i) {
			continue // skipUnstarted ends them
		}
		if !res.fromCache(ctx, r, i) {
			delete(r.rs.cacheWait, i)
			r.rs.enqueue(i)
		}
	}
}

// cacheEnded stores the result of node i, which just ended, if it
// computed a cached key, or gives the key up for another node to compute.
func (res *results) cacheEnded(ctx context.Context, r *round, i int) {
	rs, ns := r.rs, r.rs.nodes[i]
	st := ns.status.Cache
	if st == nil || st.Key == "" || (st.Result != apiv1.CacheMiss && st.Result != apiv1.CacheBypassed) {
		return
	}
	if ns.status.Phase == apiv1.PhaseSucceeded && ns.attempt.Phase == apiv1.PhaseSucceeded {
		res.storeResult(ctx, r, i)
		return
	}
	if err := res.cfg.Store.ReleaseCacheKey(ctx, st.Key, rs.waiter(i)); err != nil {
		res.log.Warn("giving up a cache key; it frees itself with the engine's leases", "run", rs.run.ID, "task", ns.status.Name, "err", err)
	}
}

// storeResult stores node i's outputs and artifacts under its key.
func (res *results) storeResult(ctx context.Context, r *round, i int) {
	rs, ns := r.rs, r.rs.nodes[i]
	t, st := &rs.plan.Tasks[i], ns.status.Cache
	e := &apiv1.CacheEntry{
		Key: st.Key, Project: projectOf(rs.run), Workflow: rs.run.Name, Task: t.Spec.Name, Version: t.Cache.Version,
		SourceRun: rs.run.ID, SourceNode: ns.status.Name, Outputs: ns.status.Outputs, CreatedAt: r.now, UsedAt: r.now,
	}
	if t.Cache.MaxAge > 0 {
		exp := r.now.Add(t.Cache.MaxAge)
		e.ExpiresAt = &exp
	}
	var dir string
	if o := t.Spec.Outputs; o != nil && len(o.Artifacts) > 0 {
		dir, _ = res.hostOutputDir(rs.attemptID(i, ns.attempt.Number))
		for _, a := range o.Artifacts {
			e.Artifacts = append(e.Artifacts, apiv1.CachedArtifact{Name: a.Name, Path: a.Path})
		}
	}
	err := res.cfg.Cache.Save(ctx, e, dir)
	if err != nil {
		res.log.Warn("storing a task's result in the cache", "run", rs.run.ID, "task", ns.status.Name, "err", err)
		st.Message = "the result could not be stored: " + err.Error()
		_ = res.cfg.Store.ReleaseCacheKey(ctx, st.Key, rs.waiter(i))
	} else {
		st.Result = apiv1.CacheStored // Message keeps why it missed
		r.events = append(r.events, apiv1.Event{
			Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: apiv1.PhaseSucceeded, Reason: "CacheStored",
			Message: fmt.Sprintf("result stored under cache key %s", short(st.Key)), Time: r.now,
		})
	}
	r.nodes[i] = true
}

// hostOutputDir is attempt id's output directory as this process reads
// it, if the backend's outputs can be read here.
func (res *results) hostOutputDir(id job.AttemptID) (string, bool) {
	h, ok := backend.As[backend.HostOutputs](res.cfg.Backend)
	if !ok {
		return "", false
	}
	return h.HostOutputDir(id), true
}

// short is a key as people read it: its first 12 hex digits.
func short(key string) string {
	const n = len("sha256:") + 12
	if len(key) > n {
		return key[len("sha256:"):n]
	}
	return key
}

// projectOf is the project that owns run: "default" when it names none.
func projectOf(run *apiv1.Run) string { return cmp.Or(run.Project, "default") }
