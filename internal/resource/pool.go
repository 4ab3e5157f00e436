package resource

import "sync"

// Pool is the resources of one machine shared by the tasks it runs. It is
// safe for concurrent use.
type Pool struct {
	mu       sync.Mutex
	capacity Request
	used     Request
}

// NewPool returns an empty pool of the given capacity.
func NewPool(capacity Request) *Pool {
	return &Pool{capacity: capacity}
}

// Capacity returns the pool's total size.
func (p *Pool) Capacity() Request { return p.capacity }

// TryAcquire takes r from the pool if it fits in what is free now, and
// reports whether it did. It never waits.
func (p *Pool) TryAcquire(r Request) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !r.Fits(p.capacity.Sub(p.used)) {
		return false
	}
	p.used = p.used.Add(r)
	return true
}

// Release returns r, taken earlier with TryAcquire, to the pool.
func (p *Pool) Release(r Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used = p.used.Sub(r)
}

// Free returns what is not taken now.
func (p *Pool) Free() Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.capacity.Sub(p.used)
}

// Take takes r from the pool even if it does not fit. The engine uses it
// for attempts that were already running when it took over their run.
func (p *Pool) Take(r Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used = p.used.Add(r)
}
