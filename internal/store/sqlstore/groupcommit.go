package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
)

// Rounds of different runs that fall together are committed together,
// and so are new runs (CreateRun): a commit, and in PostgreSQL its fsync
// and the writer lock held through it, is shared by every write waiting:
// while one transaction commits, the changes that arrive queue up, and
// the next transaction writes them all. A change refused (its run's
// lease lost, say) must leave the others whole without a savepoint per
// change: the transaction is rolled back, the refused change answered
// with its error, and the others written again in a new one. Refusals
// are rare, and each such pass drops one change, so the common group
// costs one transaction and no savepoint. A change is stored, or
// refused, before its Apply or CreateRun returns; a commit that fails fails every change
// in it, and none of them is stored. The writer that finds no
// transaction under way commits the changes waiting; once done, it hands
// the changes that arrived meanwhile to one of their writers, so no
// writer commits others' changes for long and no goroutine of the
// store's own runs.

// grouper queues the changes waiting for a transaction.
type grouper struct {
	mu      sync.Mutex
	pending []*pendingChange
	busy    bool // a writer is committing a group
}

// pendingChange is one write (an Apply's change, a new run) waiting for
// its group's commit.
type pendingChange struct {
	ctx   context.Context
	write func(ctx context.Context, tx *sql.Tx) error // writes it in tx, or refuses it
	done  chan error                                  // its answer
	lead  chan struct{}                               // its writer is to commit the next group
}

// grouped runs write, in a transaction, with whatever other writes are
// waiting, and returns once it is committed or refused.
func (s *Store) grouped(ctx context.Context, write func(ctx context.Context, tx *sql.Tx) error) error {
	p := &pendingChange{ctx: ctx, write: write, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	g := s.group
	g.mu.Lock()
	g.pending = append(g.pending, p)
	commit := !g.busy
	g.busy = true
	g.mu.Unlock()
	if commit {
		s.commitNext()
	}
	for {
		select {
		case err := <-p.done:
			return err
		case <-p.lead:
			s.commitNext()
		}
	}
}

// commitNext commits the changes waiting now, then hands the next group
// to the writer of the first change that arrived meanwhile, if any.
func (s *Store) commitNext() {
	g := s.group
	g.mu.Lock()
	batch := g.pending
	g.pending = nil
	g.mu.Unlock()
	s.commitGroup(batch)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) == 0 {
		g.busy = false
		return
	}
	g.pending[0].lead <- struct{}{}
}

// commitGroup writes batch in one transaction and answers each change.
func (s *Store) commitGroup(batch []*pendingChange) {
	if len(batch) == 1 { // no other change to keep whole
		p := batch[0]
		p.done <- s.withTx(p.ctx, func(tx *sql.Tx) error { return p.write(p.ctx, tx) })
		return
	}
	errs := make([]error, len(batch))
	ctx, release := whileAnyWaits(batch)
	defer release()
	left := make([]int, len(batch))
	for i := range left {
		left[i] = i
	}
	var err error
	for {
		refused := -1
		err = s.withTx(ctx, func(tx *sql.Tx) error {
			refused = s.applyUntilRefused(tx, batch, left, errs)
			if refused >= 0 {
				return errRefused
			}
			return nil
		})
		if refused < 0 {
			break
		}
		left = slices.DeleteFunc(left, func(i int) bool { return i == refused || errs[i] != nil })
	}
	for i, p := range batch {
		if err != nil {
			errs[i] = errors.Join(err, errs[i])
		}
		p.done <- errs[i]
	}
}

// errRefused rolls back a group's transaction in which a change was
// refused; the others are written again without it.
var errRefused = errors.New("a change of the group was refused")

// applyUntilRefused applies the changes of batch whose indices are left,
// in order, in tx, skipping those whose writers have given up (their
// errors set in errs). It stops at the first change refused, sets its
// error and returns its index: what tx wrote is then to be rolled back.
// It returns -1 when none was refused.
func (s *Store) applyUntilRefused(tx *sql.Tx, batch []*pendingChange, left []int, errs []error) int {
	for _, i := range left {
		p := batch[i]
		if err := p.ctx.Err(); err != nil {
			errs[i] = err
			continue
		}
		if err := p.write(p.ctx, tx); err != nil {
			errs[i] = err
			return i
		}
	}
	return -1
}

// whileAnyWaits is a context that ends once every change's has: the
// group's transaction is given up only when nobody waits for it. Call
// release when the transaction is over.
func whileAnyWaits(batch []*pendingChange) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var left atomic.Int64
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, p := range batch {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}
