package store

import (
	"context"
	"errors"
	"time"
)

// ErrFenced is returned for a write made under a leadership term that is
// no longer the current one: another replica leads now, and the writer
// must step down without writing anything more.
var ErrFenced = errors.New("store: the writer's leadership term has ended")

// Leadership elects the one replica, of several serving one store, that
// runs the engine. The leader holds a lease; each new leader gets the
// next term, a number that only grows, and every write the engine makes
// as leader carries its term (Change.Term, CreateRunParams.Term,
// ClaimRunsParams.Term): the store refuses it, with ErrFenced, once the
// term has ended. The check is made in the write's own transaction, so a
// paused leader that wakes after a follower took over writes nothing.
type Leadership interface {
	// Lead makes p.Holder the leader until p.Until, and returns the
	// leader after the call: p.Holder with its term when it won or
	// renewed, or the holder that leads instead. A holder that leads
	// already keeps its term; any other takes over, with the next term,
	// only when the lease has expired at p.Now or p.IsDead says its
	// holder is gone.
	Lead(ctx context.Context, p LeadParams) (Leader, error)
	// Leader returns the current leader; the zero Leader if none ever led.
	Leader(ctx context.Context) (Leader, error)
	// Resign ends holder's lease under term at once, if it still leads,
	// so that a follower takes over without waiting for it to expire.
	Resign(ctx context.Context, holder string, term int64) error
}

// LeadParams is one replica's bid to lead, or to go on leading.
type LeadParams struct {
	Holder string
	// Address is where the holder serves the API, for others to show.
	Address string
	Now     time.Time
	Until   time.Time
	// IsDead reports whether the replica named holder is gone for sure.
	IsDead func(holder string) bool
}

// Leader is who leads, under which term, since and until when.
type Leader struct {
	Holder  string
	Address string
	Term    int64
	Since   time.Time
	Until   time.Time
}
