package local

import (
	"context"

	"kiln.dev/kiln/internal/resource"
)

// Pool is the admission pool of engines on the local backend: the
// supervisor's ledger, shared by every engine on the home, in which this
// engine's attempts take room within its own capacity. What the engine
// admitted travels with each launch, so the supervisor holds it until the
// attempt ends, whatever becomes of the engine. It is safe for concurrent
// use.
type Pool struct {
	b        *Backend
	capacity resource.Request
}

// Pool returns the backend's admission pool for an engine of the given
// capacity.
func (b *Backend) Pool(capacity resource.Request) *Pool {
	return &Pool{b: b, capacity: capacity}
}

// Capacity returns the engine's share of the machine.
func (p *Pool) Capacity() resource.Request { return p.capacity }

// Admit gives back release's room, then answers claims in order against
// the shared ledger, in one call.
func (p *Pool) Admit(ctx context.Context, release []string, claims []resource.Claim) ([]resource.Admission, error) {
	p.b.forgetRoom(release)
	var r AdmitReply
	if err := p.b.call(ctx, "Supervisor.Admit", AdmitArgs{Capacity: p.capacity, Release: release, Claims: claims}, &r); err != nil {
		return nil, err
	}
	for i, a := range r.Answers {
		if a.Admitted {
			p.b.admitted(claims[i].Holder, claims[i].Request)
		}
	}
	return r.Answers, nil
}

// Hold takes room for an attempt found running.
func (p *Pool) Hold(ctx context.Context, holder string, r resource.Request) error {
	return p.b.call(ctx, "Supervisor.Hold", HoldArgs{Holder: holder, Request: r}, &Empty{})
}

// Release gives back holders' room.
func (p *Pool) Release(ctx context.Context, holders ...string) error {
	if len(holders) == 0 {
		return nil
	}
	p.b.forgetRoom(holders)
	return p.b.call(ctx, "Supervisor.Release", NamesArgs{Names: holders}, &Empty{})
}

// Withdraw removes waiters from the shared queue.
func (p *Pool) Withdraw(ctx context.Context, waiters ...string) error {
	if len(waiters) == 0 {
		return nil
	}
	return p.b.call(ctx, "Supervisor.Withdraw", NamesArgs{Names: waiters}, &Empty{})
}

// Close ends the engine's session with the supervisor: its waiters, and
// room it took for attempts it never started, are given up.
func (p *Pool) Close() error { return p.b.Close() }

// admitted remembers the room an attempt was admitted with, for its launch.
func (b *Backend) admitted(holder string, r resource.Request) {
	b.mu.Lock()
	b.room[holder] = r
	b.mu.Unlock()
}

// forgetRoom drops what admitted remembered.
func (b *Backend) forgetRoom(holders []string) {
	b.mu.Lock()
	for _, h := range holders {
		delete(b.room, h)
	}
	b.mu.Unlock()
}

// roomOf is the room holder was admitted with through this backend, if any.
func (b *Backend) roomOf(holder string) *resource.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.room[holder]; ok {
		return &r
	}
	return nil
}
