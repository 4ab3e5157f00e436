// Package gc deletes runs that are no longer wanted: runs past their
// spec's ttlSecondsAfterFinished, runs beyond their name's history limit,
// and run directories whose run has no record. Every running engine
// collects now and then; kiln gc collects once.
//
// Several engines may share one home. Only finished runs are deleted,
// each in one transaction, so two collectors racing delete each run once;
// a directory already gone is fine.
package gc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// Reasons a run is deleted, as logged, counted and printed.
const (
	ReasonRequest = "request" // a user deleted it
	ReasonTTL     = "ttl"     // its ttlSecondsAfterFinished passed
	ReasonHistory = "history" // newer runs of its name pushed it over the history limit
	ReasonOrphan  = "orphan"  // a directory under runs/ whose run has no record
)

// Remover removes what a run left outside the store (backend.RunRemover).
type Remover interface {
	RemoveRun(ctx context.Context, run string) error
}

// Config configures a Collector.
type Config struct {
	Store store.Life
	// Remover removes a deleted run's directory or objects; nil removes
	// only its records.
	Remover Remover
	// RunsDir is where runs' directories are ($KILN_HOME/runs); empty
	// looks for no orphan directories.
	RunsDir string
	// History is the engine's history limit for names whose newest run's
	// spec sets none; nil keeps every run.
	History *store.HistoryLimit
	// OrphanGrace is how old a directory without a run must be before it
	// is removed, so that a run being created is never taken for one.
	// Default 10 minutes.
	OrphanGrace time.Duration
	// Log receives one line per deletion, with its reason.
	Log *slog.Logger
	// Deleted, if set, counts deletions by reason (a metric).
	Deleted func(reason string)
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Deletion is one run deleted, or one that would be with a dry run, or
// one due that is kept for now (Deferred).
type Deletion struct {
	Run    apiv1.RunID `json:"run"`
	Reason string      `json:"reason"`
	// Detail says why, for people.
	Detail string `json:"detail"`
	// Deferred, if set, says why the run is kept for now: reruns that
	// have not ended read its results. A later collection deletes it.
	Deferred string `json:"deferred,omitempty"`
}

// Collector finds and deletes runs.
type Collector struct {
	cfg Config
}

// New returns a collector.
func New(cfg Config) *Collector {
	if cfg.OrphanGrace <= 0 {
		cfg.OrphanGrace = 10 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Collector{cfg: cfg}
}

// Collect deletes every run due for deletion and every orphan directory,
// and returns what it deleted; with dryRun it deletes nothing and returns
// what it would delete. A run another collector deleted first is left
// out; one that reruns still read from is kept and returned Deferred. It
// goes on past a run it cannot delete and returns the errors joined.
func (c *Collector) Collect(ctx context.Context, dryRun bool) ([]Deletion, error) {
	due, err := c.due(ctx)
	if err != nil {
		return nil, err
	}
	orphans, err := c.orphans(ctx)
	if err != nil {
		return nil, err
	}
	var done []Deletion
	var errs []error
	for _, d := range append(due, orphans...) {
		if dryRun {
			d, err = c.wouldDefer(ctx, d)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			done = append(done, d)
			continue
		}
		d, ok, err := c.remove(ctx, d)
		if ok || d.Deferred != "" {
			done = append(done, d)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}

// due lists the runs past their TTL, then those over a history limit.
func (c *Collector) due(ctx context.Context) ([]Deletion, error) {
	expired, err := c.cfg.Store.ExpiredRuns(ctx, c.cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("finding expired runs: %w", err)
	}
	limit := store.Unlimited
	if c.cfg.History != nil {
		limit = *c.cfg.History
	}
	over, err := c.cfg.Store.RunsOverHistory(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("finding runs over their history limit: %w", err)
	}
	seen := map[apiv1.RunID]bool{}
	var out []Deletion
	for _, r := range expired {
		seen[r.ID] = true
		out = append(out, Deletion{Run: r.ID, Reason: ReasonTTL, Detail: fmt.Sprintf(
			"%s at %s; ttlSecondsAfterFinished %d passed", r.Phase, r.FinishedAt.Format(time.RFC3339), int64(r.TTL/time.Second))})
	}
	for _, r := range over {
		if !seen[r.ID] {
			out = append(out, Deletion{Run: r.ID, Reason: ReasonHistory, Detail: fmt.Sprintf(
				"%s; %d newer %s %s of %s in project %s kept", r.Phase, r.Keep, class(r.Phase), runsWord(r.Keep), r.Name, r.Project)})
		}
	}
	return out, nil
}

func class(p apiv1.Phase) string {
	if p == apiv1.PhaseSucceeded {
		return "succeeded"
	}
	return "failed or cancelled"
}

// remove deletes one run, or one orphan directory, and reports whether
// this collector deleted it; a run reruns read from is returned Deferred.
func (c *Collector) remove(ctx context.Context, d Deletion) (Deletion, bool, error) {
	if d.Reason == ReasonOrphan {
		if err := c.removeFiles(ctx, d.Run); err != nil {
			return d, false, err
		}
		c.deleted("orphan run directory removed", d)
		return d, true, nil
	}
	err := c.cfg.Store.DeleteRun(ctx, d.Run)
	var inUse *store.InUseError
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrPhase):
		return d, false, nil // another collector deleted it, or it was retried
	case errors.As(err, &inUse):
		d.Deferred = readBy(inUse.Readers)
		c.cfg.Log.Info("run deletion deferred", "run", d.Run, "reason", d.Reason, "deferred", d.Deferred)
		return d, false, nil
	case err != nil:
		return d, false, fmt.Errorf("deleting run %s: %w", d.Run, err)
	}
	c.deleted("run deleted", d)
	return d, true, c.removeFiles(ctx, d.Run)
}

// wouldDefer is d as a dry run reports it: Deferred if reruns read from
// its run.
func (c *Collector) wouldDefer(ctx context.Context, d Deletion) (Deletion, error) {
	if d.Reason == ReasonOrphan {
		return d, nil
	}
	readers, err := c.cfg.Store.Readers(ctx, d.Run)
	if err != nil {
		return d, fmt.Errorf("finding the runs that read run %s: %w", d.Run, err)
	}
	if len(readers) > 0 {
		d.Deferred = readBy(readers)
	}
	return d, nil
}

// readBy says why a run is kept: the reruns that read from it.
func readBy(readers []apiv1.RunID) string {
	ids := make([]string, len(readers))
	for i, r := range readers {
		ids[i] = string(r)
	}
	return "kept while " + strings.Join(ids, ", ") + " (a rerun that has not ended) reads its results"
}

// deleted logs and counts one deletion.
func (c *Collector) deleted(msg string, d Deletion) {
	c.cfg.Log.Info(msg, "run", d.Run, "reason", d.Reason, "detail", d.Detail)
	if c.cfg.Deleted != nil {
		c.cfg.Deleted(d.Reason)
	}
}

// removeFiles removes what the run left outside the store. If it fails,
// the directory is an orphan that a later collection removes.
func (c *Collector) removeFiles(ctx context.Context, id apiv1.RunID) error {
	if c.cfg.Remover == nil {
		return nil
	}
	if err := c.cfg.Remover.RemoveRun(ctx, string(id)); err != nil {
		return fmt.Errorf("removing the files of deleted run %s: %w", id, err)
	}
	return nil
}

// Delete deletes one finished run at a user's request: its records, then
// its files. ErrNotFound and *store.PhaseError come from the store.
func (c *Collector) Delete(ctx context.Context, id apiv1.RunID) error {
	if err := c.cfg.Store.DeleteRun(ctx, id); err != nil {
		return err
	}
	c.deleted("run deleted", Deletion{Run: id, Reason: ReasonRequest, Detail: "a user deleted it"})
	return c.removeFiles(ctx, id)
}

// Run collects now and every interval until ctx ends, logging what fails.
func (c *Collector) Run(ctx context.Context, every time.Duration) {
	for {
		if _, err := c.Collect(ctx, false); err != nil && ctx.Err() == nil {
			c.cfg.Log.Warn("collecting runs", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func runsWord(n int) string {
	if n == 1 {
		return "run is"
	}
	return "runs are"
}
