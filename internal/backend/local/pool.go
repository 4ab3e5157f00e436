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
	if held, handed := p.b.forgetRoom(release); len(held) > 0 {
		if err := p.b.call(ctx, "Supervisor.Hold", HoldArgs{Holds: held, Release: handed}, &Empty{}); err != nil {
			return nil, err
		}
	}
	var r AdmitReply
	if err := p.b.call(ctx, "Supervisor.Admit", AdmitArgs{Capacity: p.capacity, Release: release, Claims: claims}, &r); err != nil {
		return nil, err
	}
	for i, a := range r.Answers {
		if a.Admitted {
			p.b.admitted(claims[i].Sized(a.Steps))
		}
		p.b.alone.Store(!a.Contended)
	}
	return r.Answers, nil
}

// Hold takes the room of holds' holders, fit or not: attempts found
// running.
func (p *Pool) Hold(ctx context.Context, holds []resource.Claim) error {
	return p.b.call(ctx, "Supervisor.Hold", HoldArgs{Holds: holds}, &Empty{})
}

// HandOver gives the room of release's holders, this engine's attempts
// that ended, to c's holder, if the supervisor's last answer said no
// other engine waits. It asks nothing now: the hand-over travels with the
// call that starts c's attempt (or with its release, if it never
// starts), so the engine's round waits on no call, and the ledger never
// counts less than is taken. Each start's answer says again whether
// another engine waits.
func (p *Pool) HandOver(_ context.Context, c resource.Claim, release []string) (bool, error) {
	if !p.b.alone.Load() {
		return false, nil
	}
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	for _, h := range release {
		if _, pending := p.b.handover[h]; pending {
			return false, nil // it never started: asking settles what it was handed
		}
	}
	for _, h := range release {
		delete(p.b.room, h)
	}
	p.b.room[c.Holder] = c
	p.b.handover[c.Holder] = release
	return true, nil
}

// Granted receives when room was granted to the engine's waiters, which
// should ask again; call it again after each receive.
func (p *Pool) Granted() <-chan struct{} { return p.b.grants }

// Contended reports whether, as the supervisor last said, another engine
// waits for room.
func (p *Pool) Contended() bool { return !p.b.alone.Load() }

// Release gives back holders' room. A holder that was handed room and
// never started takes it first, in the same call, so the ledger forgets
// it waited and what it was handed goes back with it.
func (p *Pool) Release(ctx context.Context, holders ...string) error {
	if len(holders) == 0 {
		return nil
	}
	held, handed := p.b.forgetRoom(holders)
	if len(held) > 0 {
		return p.b.call(ctx, "Supervisor.Hold", HoldArgs{Holds: held, Release: append(handed, holders...)}, &Empty{})
	}
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

// admitted remembers the claim an attempt was admitted with, for its
// launch.
func (b *Backend) admitted(c resource.Claim) {
	b.mu.Lock()
	b.room[c.Holder] = c
	b.mu.Unlock()
}

// forgetRoom drops what admitted remembered of holders. Of those that
// were handed room and never started, it returns their claims and the
// holders of the ended attempts whose room they were handed.
func (b *Backend) forgetRoom(holders []string) (held []resource.Claim, handed []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, h := range holders {
		if from, ok := b.handover[h]; ok {
			held, handed = append(held, b.room[h]), append(handed, from...)
			delete(b.handover, h)
		}
		delete(b.room, h)
	}
	return held, handed
}

// startArgs fills in what the launch of holder tells the ledger: the
// claim it was admitted with, and the room it was handed. takeBack puts
// the hand-over back if the launch did not get through.
func (b *Backend) startArgs(a *StartArgs) (takeBack func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.room[a.ID]; ok {
		a.Room = &c
	}
	a.Release = b.handover[a.ID]
	delete(b.handover, a.ID)
	return func() {
		if len(a.Release) > 0 {
			b.mu.Lock()
			b.handover[a.ID] = a.Release
			b.mu.Unlock()
		}
	}
}

// SetQuotas replaces the projects' quotas on the supervisor's ledger,
// which every engine on the home shares.
func (p *Pool) SetQuotas(ctx context.Context, quotas map[string]resource.Quota) error {
	return p.b.call(ctx, "Supervisor.SetQuotas", QuotasArgs{Quotas: quotas}, &Empty{})
}
