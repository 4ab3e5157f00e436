package controller

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"kiln.dev/kiln/internal/store"
)

// leadership is how the engine stands among replicas of one store: a
// follower works no run and leaves what it saves for the leader; the
// leader writes under its term, and stops being one the first time the
// store refuses a write because the term has ended.
type leadership struct {
	follower atomic.Bool
	term     atomic.Int64
	once     sync.Once
	fenced   chan struct{}
}

// Follow makes the engine a follower: Submit and Retry save runs with no
// owner, for the leader to claim, and Claim claims nothing. Call it before
// Run; Lead ends it.
func (c *Controller) Follow() { c.lead.follower.Store(true) }

// Lead makes the engine the leader of term: every run it saves, claims or
// changes is written under the term, and refused by the store once a
// later leader holds a later one (see store.Leadership). Call it before
// Run.
func (c *Controller) Lead(term int64) {
	c.lead.term.Store(term)
	c.lead.follower.Store(false)
}

// Following reports whether the engine is a follower.
func (c *Controller) Following() bool { return c.lead.follower.Load() }

// Fenced returns a channel closed once the store refused a write of this
// engine because its leadership term had ended: another replica leads,
// and this one must stop.
func (c *Controller) Fenced() <-chan struct{} { return c.lead.fenced }

// wasFenced reports whether err is the store's refusal of an ended term,
// and if so closes Fenced.
func (c *Controller) wasFenced(err error) bool {
	if !errors.Is(err, store.ErrFenced) {
		return false
	}
	c.lead.once.Do(func() {
		c.log.Error("the store refused a write: this engine's leadership term has ended and another replica leads", "term", c.lead.term.Load())
		close(c.lead.fenced)
	})
	return true
}

// owner is who owns what the engine saves: nobody, on a follower.
func (c *Controller) owner() string {
	if c.lead.follower.Load() {
		return ""
	}
	return c.cfg.Owner
}

// leaseUntil is when a lease the engine takes now ends: at once, on a
// follower, whose runs are the leader's to claim.
func (c *Controller) leaseUntil() time.Time {
	if c.lead.follower.Load() {
		return time.Unix(0, 0).UTC()
	}
	return c.now().Add(c.cfg.LeaseTTL)
}

// Owner names this engine in the leases it holds.
func (c *Controller) Owner() string { return c.cfg.Owner }
