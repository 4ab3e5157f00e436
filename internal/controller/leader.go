package controller

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"kiln.dev/kiln/internal/store"
)

// Leadership is how the engine stands among replicas of one store: a
// follower works no run and leaves what it saves for the leader; the
// leader writes under its term, and stops being one the first time the
// store refuses a write because the term has ended. It is safe for
// concurrent use.
type Leadership struct {
	name     string
	ttl      time.Duration
	log      *slog.Logger
	follower atomic.Bool
	term     atomic.Int64
	once     sync.Once
	fenced   chan struct{}
}

func newLeadership(name string, ttl time.Duration, log *slog.Logger) *Leadership {
	return &Leadership{name: name, ttl: ttl, log: log, fenced: make(chan struct{})}
}

// Follow makes the engine a follower: Submit and Retry save runs with no
// owner, for the leader to claim, and Claim claims nothing. Call it before
// Run; Lead ends it.
func (l *Leadership) Follow() { l.follower.Store(true) }

// Lead makes the engine the leader of term: every run it saves, claims or
// changes is written under the term, and refused by the store once a
// later leader holds a later one (see store.Leadership). Call it before
// Run.
func (l *Leadership) Lead(term int64) {
	l.term.Store(term)
	l.follower.Store(false)
}

// Following reports whether the engine is a follower.
func (l *Leadership) Following() bool { return l.follower.Load() }

// Fenced returns a channel closed once the store refused a write of this
// engine because its leadership term had ended: another replica leads,
// and this one must stop.
func (l *Leadership) Fenced() <-chan struct{} { return l.fenced }

// Owner names this engine in the leases it holds.
func (l *Leadership) Owner() string { return l.name }

// Term is the leadership term the engine writes under (0: none).
func (l *Leadership) Term() int64 { return l.term.Load() }

// wasFenced reports whether err is the store's refusal of an ended term,
// and if so closes Fenced.
func (l *Leadership) wasFenced(err error) bool {
	if !errors.Is(err, store.ErrFenced) {
		return false
	}
	l.once.Do(func() {
		l.log.Error("the store refused a write: this engine's leadership term has ended and another replica leads", "term", l.term.Load())
		close(l.fenced)
	})
	return true
}

// owner is who owns what the engine saves: nobody, on a follower.
func (l *Leadership) owner() string {
	if l.follower.Load() {
		return ""
	}
	return l.name
}

// leaseUntil is when a lease the engine takes at now ends: at once, on a
// follower, whose runs are the leader's to claim.
func (l *Leadership) leaseUntil(now time.Time) time.Time {
	if l.follower.Load() {
		return time.Unix(0, 0).UTC()
	}
	return now.Add(l.ttl)
}
