package resource

import "context"

// Pool is a machine's resources for one engine in one process: a Ledger
// of its own and the engine's capacity. The Kubernetes backend's engine
// uses one (unbounded: the cluster's scheduler decides what fits), as do
// tests; engines on the local backend share the supervisor's ledger
// instead. It is safe for concurrent use.
type Pool struct {
	capacity Request
	ledger   *Ledger
	session  string
}

// NewPool returns an empty pool of the given capacity.
func NewPool(capacity Request) *Pool {
	return &Pool{capacity: capacity, ledger: NewLedger()}
}

// Pool returns a pool of the given capacity on l, for one session: what
// it holds and waits for counts with every other pool on l.
func (l *Ledger) Pool(session string, capacity Request) *Pool {
	return &Pool{capacity: capacity, ledger: l, session: session}
}

// Close ends the pool's session: its waiters, and the room it took for
// attempts that never started, are given up.
func (p *Pool) Close() error {
	p.ledger.EndSession(p.session)
	return nil
}

// Capacity returns the pool's total size.
func (p *Pool) Capacity() Request { return p.capacity }

// Admit gives back release's room, then answers claims in order; see
// Ledger.Admit.
func (p *Pool) Admit(_ context.Context, release []string, claims []Claim) ([]Admission, error) {
	p.ledger.Release(release...)
	return p.ledger.Admit(p.session, p.capacity, claims), nil
}

// Hold takes the room of holds' holders whether it fits or not; see
// Ledger.Hold.
func (p *Pool) Hold(_ context.Context, holds []Claim) error {
	for _, c := range holds {
		p.ledger.Hold(p.session, c)
	}
	return nil
}

// HandOver gives the room of release's holders to c's holder unless
// another session waits; see Ledger.HandOver.
func (p *Pool) HandOver(_ context.Context, c Claim, release []string) (bool, error) {
	return p.ledger.HandOver(p.session, c, release), nil
}

// Release gives back the room of each holder.
func (p *Pool) Release(_ context.Context, holders ...string) error {
	p.ledger.Release(holders...)
	return nil
}

// Withdraw removes waiters that no longer wait.
func (p *Pool) Withdraw(_ context.Context, waiters ...string) error {
	p.ledger.Withdraw(waiters...)
	return nil
}

// Granted returns a channel closed when room is next granted to a waiter
// (see Ledger), whose engine should ask again; call it again after each
// receive.
func (p *Pool) Granted() <-chan struct{} {
	_, _, ch := p.ledger.Granted(p.session)
	return ch
}

// Free returns what is not held now.
func (p *Pool) Free() Request { return p.capacity.Sub(p.ledger.Used()) }

// SetQuotas replaces the projects' quotas on the pool's ledger; see
// Ledger.SetQuotas.
func (p *Pool) SetQuotas(_ context.Context, quotas map[string]Quota) error {
	p.ledger.SetQuotas(quotas)
	return nil
}
