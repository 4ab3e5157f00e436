// Package leader elects the one kiln server, of several replicas sharing a
// store, that runs the engine. It bids for a lease kept in the store
// (store.Leadership) and says when this replica wins and when it no
// longer leads; the store's terms fence what a replica writes after that.
package leader

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"kiln.dev/kiln/internal/store"
)

// Defaults for Config.
const (
	DefaultTTL   = 10 * time.Second
	DefaultRetry = time.Second
)

// Config is what an Elector bids with.
type Config struct {
	Store store.Leadership
	// Holder names this replica; Address is where it serves the API.
	Holder, Address string
	// TTL is how long the lease lasts unless renewed (default 10s); the
	// leader renews it, and followers bid, every Retry (default 1s).
	TTL, Retry time.Duration
	// IsDead reports whether the replica named holder is gone for sure,
	// so that a follower takes over without waiting for its lease.
	IsDead func(holder string) bool
	Log    *slog.Logger
}

// Elector bids for the leadership until it wins, and watches that it
// keeps it.
type Elector struct {
	cfg Config

	mu      sync.Mutex
	seen    store.Leader // the leader as the last bid saw it
	leading bool
}

// New returns an Elector; Run starts bidding.
func New(cfg Config) *Elector {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Retry <= 0 {
		cfg.Retry = DefaultRetry
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Elector{cfg: cfg}
}

// LostError says why a leader stopped leading.
type LostError struct {
	Term int64
	// To is the replica that leads now; empty when the lease could not
	// be renewed before it ran out.
	To     store.Leader
	Reason string
}

func (e *LostError) Error() string {
	if e.To.Holder != "" {
		return fmt.Sprintf("lost the leadership of term %d to %s (%s), term %d", e.Term, e.To.Holder, e.To.Address, e.To.Term)
	}
	return fmt.Sprintf("lost the leadership of term %d: %s", e.Term, e.Reason)
}

// Run bids every Retry until ctx ends (nil) or this replica, having won,
// no longer leads (a *LostError). won is called once when it wins, with
// its term and the leader before it (the zero Leader if none was seen).
func (e *Elector) Run(ctx context.Context, won func(term int64, before store.Leader)) error {
	t := time.NewTicker(e.cfg.Retry)
	defer t.Stop()
	if l, err := e.cfg.Store.Leader(ctx); err == nil {
		e.set(l, false) // the leader before this replica, if it wins at once
	}
	var term int64
	var renewed time.Time
	for {
		now := time.Now()
		l, err := e.cfg.Store.Lead(ctx, store.LeadParams{
			Holder: e.cfg.Holder, Address: e.cfg.Address, Now: now, Until: now.Add(e.cfg.TTL), IsDead: e.cfg.IsDead,
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && term > 0 && time.Since(renewed) >= e.cfg.TTL:
			return &LostError{Term: term, Reason: "the lease could not be renewed before it ran out: " + err.Error()}
		case err != nil:
			e.cfg.Log.Warn("bidding for the leadership", "err", err)
		case l.Holder == e.cfg.Holder && term == 0:
			term, renewed = l.Term, now
			before, _ := e.Leader()
			e.set(l, true)
			won(term, before)
		case l.Holder == e.cfg.Holder && l.Term == term:
			renewed = now
			e.set(l, true)
		case term > 0:
			e.set(l, false)
			return &LostError{Term: term, To: l}
		default:
			e.set(l, false)
		}
		if time.Since(now) > e.cfg.Retry {
			continue // the bid waited: bid again at once, with the time it is now
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (e *Elector) set(l store.Leader, leading bool) {
	e.mu.Lock()
	e.seen, e.leading = l, leading
	e.mu.Unlock()
}

// Leader returns the leader as the last bid saw it, and whether it is
// this replica.
func (e *Elector) Leader() (store.Leader, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen, e.leading
}

// Resign gives up the leadership of term, if this replica still holds it,
// so a follower takes over at once instead of when the lease runs out.
func (e *Elector) Resign(ctx context.Context, term int64) error {
	return e.cfg.Store.Resign(ctx, e.cfg.Holder, term)
}
