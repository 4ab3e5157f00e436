package resource

import "context"

// Resize changes the room c's holder holds to c.Request, for an elastic
// gang that lost a host or gains one. Less always goes: what it gave back
// is granted to whoever waits first. More is taken only when nothing of a
// higher priority than c's waits and the difference fits within capacity
// beside everything held, and its project's quota allows it (see
// Quota); the holder never waits for it. Resize reports
// whether the holder now holds c.Request; a holder that holds nothing is
// left alone.
func (l *Ledger) Resize(capacity Request, c Claim) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.held[c.Holder]
	if !ok {
		return false
	}
	more := c.Request.Sub(h.req)
	if more.MilliCPU > 0 || more.Memory > 0 || more.GPU > 0 {
		if l.queue.topAbove(c.Priority) || !c.Request.Add(l.used.Sub(h.req)).Fits(capacity) {
			return false
		}
		if len(l.quotas) > 0 && l.quotaBlock(h.project, more, l.withinWaiting()) != "" {
			return false // beyond its project's quota, and it may not borrow now
		}
	}
	l.used = l.used.Add(more)
	l.usage[h.project] = l.usage[h.project].Add(more)
	h.req = c.Request
	l.held[c.Holder] = h
	if more.MilliCPU < 0 || more.Memory < 0 || more.GPU < 0 {
		l.grant()
	}
	return true
}

// Resize changes the room c's holder holds; see Ledger.Resize.
func (p *Pool) Resize(_ context.Context, c Claim) (bool, error) {
	return p.ledger.Resize(p.capacity, c), nil
}
