package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/who"
)

// Runner is what the loop asks of the engine; the embedded engine
// (internal/app) is one.
type Runner interface {
	// Start starts the run of s for tick through the engine's submit
	// path, with the ID RunID gives it, and returns that ID; an error
	// that is store.ErrConflict when the run exists already.
	Start(ctx context.Context, s *apiv1.Schedule, tick time.Time) (apiv1.RunID, error)
	// Runs returns the runs s started (its label), newest first.
	Runs(ctx context.Context, s *apiv1.Schedule) ([]*apiv1.Run, error)
	// Cancel asks a run to stop.
	Cancel(ctx context.Context, id apiv1.RunID) error
	// Delete deletes a finished run with its files, as the collector does.
	Delete(ctx context.Context, id apiv1.RunID) error
}

// Config configures a Loop.
type Config struct {
	Store  store.Schedules
	Runner Runner
	Log    *slog.Logger
	// Every is the longest the loop sleeps between passes, so that it
	// sees new and changed schedules; default a second.
	Every time.Duration
	// HistoryEvery is how often a schedule's finished runs are counted
	// against its history limits; default 10 seconds.
	HistoryEvery time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Loop fires every project's schedules. Run it on the leader alone.
type Loop struct {
	cfg     Config
	history map[string]time.Time // when each schedule's history was last pruned
}

// New returns a loop.
func New(cfg Config) *Loop {
	if cfg.Every <= 0 {
		cfg.Every = time.Second
	}
	if cfg.HistoryEvery <= 0 {
		cfg.HistoryEvery = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Loop{cfg: cfg, history: map[string]time.Time{}}
}

// Run passes over the schedules until ctx ends, each time at the next
// tick of any of them or after Every, whichever is first.
func (l *Loop) Run(ctx context.Context) {
	for {
		wake, err := l.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			l.cfg.Log.Warn("firing schedules", "err", err)
		}
		timer := time.NewTimer(time.Until(wake))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// Pass fires what is due of every schedule and prunes their history, and
// returns when the next pass is due. It goes on past a schedule it
// cannot tend, and returns the errors joined.
func (l *Loop) Pass(ctx context.Context) (time.Time, error) {
	now := l.cfg.Now()
	wake := now.Add(l.cfg.Every)
	list, err := l.cfg.Store.ListSchedules(ctx, "")
	if err != nil {
		return wake, fmt.Errorf("listing schedules: %w", err)
	}
	var errs []error
	for _, s := range list {
		if ctx.Err() != nil {
			break
		}
		next, err := l.tend(ctx, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %s/%s: %w", s.Status.Project, s.Metadata.Name, err))
		}
		if !next.IsZero() && next.Before(wake) {
			wake = next
		}
	}
	return wake.Add(10 * time.Millisecond), errors.Join(errs...)
}

// tend fires what is due of one schedule, stores what it did and prunes
// its history, and returns its next tick (zero while suspended, or when
// its expression never matches).
func (l *Loop) tend(ctx context.Context, s *apiv1.Schedule) (time.Time, error) {
	c, err := Parse(&s.Spec)
	if err != nil {
		return time.Time{}, err // checked when applied: only a zone this machine lacks
	}
	now := l.cfg.Now()
	if c.Never(now) {
		return time.Time{}, nil // stored before apply refused it: nothing to fire, ever
	}
	var fireErr error
	more := false
	if !s.Spec.Suspend {
		more, fireErr = l.fire(ctx, c, s, now)
	}
	histErr := l.prune(ctx, s, now)
	switch {
	case s.Spec.Suspend:
		return time.Time{}, errors.Join(fireErr, histErr)
	case more:
		return now, errors.Join(fireErr, histErr) // catching up: the next pass at once
	}
	return c.Next(now), errors.Join(fireErr, histErr)
}

// fire starts the runs of the ticks due at now, records the ticks missed
// and skipped, and stores the status. more says that more ticks than one
// pass starts were due.
func (l *Loop) fire(ctx context.Context, c *Cron, s *apiv1.Schedule, now time.Time) (more bool, err error) {
	since := s.Status.CreatedAt
	if s.Status.LastTick != nil {
		since = *s.Status.LastTick
	}
	p := c.Due(since, now, s.Spec.StartingDeadlineSeconds)
	if p.Last.IsZero() {
		return false, nil
	}
	more = len(p.Fire) == MaxCatchUp
	st := *s.Status
	if p.Missed > 0 {
		l.missed(s, &st, p)
	}
	if len(p.Fire) > 0 {
		err = l.start(ctx, s, &st, p.Fire)
	}
	if err == nil && (st.LastTick == nil || p.Last.After(*st.LastTick)) {
		st.LastTick = &p.Last
	}
	if st.LastTick == nil || (s.Status.LastTick != nil && !st.LastTick.After(*s.Status.LastTick)) {
		return false, err // nothing dealt with
	}
	if _, serr := l.cfg.Store.SetScheduleStatus(ctx, s.Status.Project, s.Metadata.Name, &st); serr != nil {
		return false, errors.Join(err, fmt.Errorf("storing its status: %w", serr))
	}
	return more && err == nil, err
}

// missed records the ticks of p found too late.
func (l *Loop) missed(s *apiv1.Schedule, st *apiv1.ScheduleStatus, p Plan) {
	count := fmt.Sprint(p.Missed)
	if p.MissedAtLeast {
		count = "at least " + count
	}
	why := "no startingDeadlineSeconds is set, so only the latest missed tick runs"
	if d := s.Spec.StartingDeadlineSeconds; d != nil {
		why = fmt.Sprintf("each was more than startingDeadlineSeconds (%d) late", *d)
	}
	st.Missed += p.Missed
	st.Code = apiv1.CodeTickMissed
	ticks := "ticks"
	if p.Missed == 1 && !p.MissedAtLeast {
		ticks = "tick"
	}
	st.Message = fmt.Sprintf("%s %s missed, the latest %s: %s", count, ticks, p.LastMissed.UTC().Format(time.RFC3339), why)
	l.cfg.Log.Warn("schedule ticks missed", "project", s.Status.Project, "schedule", s.Metadata.Name, "missed", count, "latest", p.LastMissed)
}

// start starts the run of each tick, oldest first, as the concurrency
// policy allows. It stops at an error of the store or engine, leaving
// st.LastTick at the last tick dealt with, so that the next pass tries
// the rest again; their runs' IDs keep a tick from running twice.
func (l *Loop) start(ctx context.Context, s *apiv1.Schedule, st *apiv1.ScheduleStatus, ticks []time.Time) error {
	active, err := l.active(ctx, s)
	if err != nil {
		return err
	}
	for _, tick := range ticks {
		d := Decide(s.Spec.Policy(), active, tick)
		if !d.Start {
			st.Skipped, st.Code, st.Message = st.Skipped+1, apiv1.CodeTickSkipped, d.Reason
		}
		if d.Start {
			l.cancel(ctx, s, d.Cancel)
			if len(d.Cancel) > 0 {
				active = nil
			}
			id, err := l.cfg.Runner.Start(ctx, s, tick)
			if errors.Is(err, store.ErrFenced) || (err != nil && !errors.Is(err, store.ErrConflict) && !isCoded(err)) {
				return err
			}
			l.started(s, st, tick, id, err)
			if err == nil {
				active = append(active, id)
			}
		}
		st.LastTick = &tick
	}
	return nil
}

// started records the outcome of starting tick's run id.
func (l *Loop) started(s *apiv1.Schedule, st *apiv1.ScheduleStatus, tick time.Time, id apiv1.RunID, err error) {
	log := l.cfg.Log.With("project", s.Status.Project, "schedule", s.Metadata.Name, "tick", tick, "run", id)
	switch {
	case err == nil:
		log.Info("schedule started a run")
	case errors.Is(err, store.ErrConflict):
		log.Info("the tick's run exists: it was started before")
	default:
		log.Warn("the tick started no run", "err", err)
		st.Code, st.Message = apiv1.CodeTickFailed, fmt.Sprintf("tick %s started no run: %v", tick.UTC().Format(time.RFC3339), err)
		return
	}
	t := tick
	st.LastScheduleTime, st.LastRun = &t, id
}

// cancel asks the unfinished runs a Replace policy replaces to stop.
func (l *Loop) cancel(ctx context.Context, s *apiv1.Schedule, ids []apiv1.RunID) {
	for _, id := range ids {
		if err := l.cfg.Runner.Cancel(who.With(ctx, "schedule "+s.Metadata.Name+" (concurrencyPolicy Replace)"), id); err != nil && !errors.Is(err, store.ErrPhase) && !isCoded(err) {
			l.cfg.Log.Warn("cancelling a run a schedule replaces", "schedule", s.Metadata.Name, "run", id, "err", err)
		}
	}
}

// active lists the unfinished runs of s.
func (l *Loop) active(ctx context.Context, s *apiv1.Schedule) ([]apiv1.RunID, error) {
	runs, err := l.cfg.Runner.Runs(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("listing its runs: %w", err)
	}
	return Active(runs), nil
}

// Active returns the IDs of the runs that have not finished.
func Active(runs []*apiv1.Run) []apiv1.RunID {
	var out []apiv1.RunID
	for _, r := range runs {
		if !r.Status.Phase.Done() {
			out = append(out, r.ID)
		}
	}
	return out
}

// isCoded reports whether err is a user's error (a template gone, a
// workflow that no longer checks), not the store's or the engine's.
func isCoded(err error) bool { return len(apiv1.Errors(err)) > 0 }
