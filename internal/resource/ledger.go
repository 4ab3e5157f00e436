package resource

import (
	"slices"
	"sync"
)

// Claim asks for room for one attempt.
type Claim struct {
	// Holder names what holds the room once it is admitted: the attempt.
	Holder string
	// Waiter names what waits while it does not fit: the node, which keeps
	// its place in the queue from one round to the next.
	Waiter string
	// Request is the room it needs, all at once (a gang's every node).
	Request Request
	// Priority orders the waiting: while anything of a higher priority
	// waits, no claim of a lower one is admitted.
	Priority int32
}

// Admission is the answer to one claim.
type Admission struct {
	// Admitted is set when the room was taken for the claim's holder.
	Admitted bool
	// Outranked is set when the claim was not tried because something of
	// a higher priority waits.
	Outranked bool
	// Free is what the asking engine's pool had free when the claim was
	// answered.
	Free Request
	// Contended is set when, after the claim was answered, another
	// session (another engine) had something waiting for room.
	Contended bool
}

// Ledger is the book of one machine's resources: who holds what, and
// who waits at which priority. Every engine working on one kiln home
// admits against the same ledger (the supervisor keeps it), so their
// tasks never oversubscribe the machine together. Each engine admits
// within its own capacity (its --cpus, --memory, --gpus), counted against
// everything every engine holds.
//
// Room is held per holder, so taking and giving back are idempotent.
// Holdings and waiters belong to a session (one engine's connection).
// The engine gives an attempt's room back once it has recorded how the
// attempt ended, so nothing else starts in that room before the engine
// has acted on the end (a failure that stops the run, say). When a
// session ends, its waiters go, and so does the room it took for
// attempts that never started or that have exited; room of attempts
// still running stays until they exit. A Ledger is safe for concurrent
// use.
type Ledger struct {
	mu        sync.Mutex
	used      Request
	held      map[string]holding
	waiting   map[string]waiter
	byPrio    map[int32]int   // waiters per priority
	bySession map[string]int  // waiters per session
	ended     map[string]bool // sessions that ended
}

type holding struct {
	req     Request
	session string
	bound   bool // the attempt started
	exited  bool // and its processes are gone
}

type waiter struct {
	prio    int32
	session string
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{
		held: map[string]holding{}, waiting: map[string]waiter{},
		byPrio: map[int32]int{}, bySession: map[string]int{}, ended: map[string]bool{},
	}
}

// Admit answers claims in order, within capacity. A claim is admitted
// when nothing of a higher priority waits and its request fits in what
// capacity leaves beside everything held; otherwise its waiter waits, at
// its priority, until a later Admit admits it or it is withdrawn. Among
// equal priorities a claim that fits may pass one that does not. A claim
// whose holder already holds room is admitted again at no cost.
func (l *Ledger) Admit(session string, capacity Request, claims []Claim) []Admission {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Admission, len(claims))
	for i, c := range claims {
		out[i] = l.admit(session, capacity, c)
		out[i].Free, out[i].Contended = capacity.Sub(l.used), l.contended(session)
	}
	return out
}

// admit answers one claim. l.mu must be held.
func (l *Ledger) admit(session string, capacity Request, c Claim) Admission {
	if _, ok := l.held[c.Holder]; ok {
		l.unwait(c.Waiter)
		return Admission{Admitted: true}
	}
	outranked := l.topAbove(c.Priority)
	if !outranked && c.Request.Add(l.used).Fits(capacity) {
		l.held[c.Holder] = holding{req: c.Request, session: session}
		l.used = l.used.Add(c.Request)
		l.unwait(c.Waiter)
		return Admission{Admitted: true}
	}
	l.wait(c.Waiter, waiter{prio: c.Priority, session: session})
	return Admission{Outranked: outranked}
}

// Hold takes c's room for its holder whether it fits or not, and its
// waiter waits no more: an engine adopting an attempt that was running
// before it started counts what the attempt holds. If the holder holds
// room already, the session takes it over.
func (l *Ledger) Hold(session string, c Claim) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hold(session, c)
}

// HandOver gives the room of release's holders, attempts of session that
// ended, straight to c's holder, if no other session waits for room;
// otherwise it changes nothing and reports false, and the engine asks.
func (l *Ledger) HandOver(session string, c Claim, release []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.contended(session) {
		return false
	}
	l.hold(session, c)
	l.release(release)
	return true
}

// Contended reports whether another session than session waits for room.
func (l *Ledger) Contended(session string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.contended(session)
}

func (l *Ledger) contended(session string) bool {
	return len(l.waiting) > l.bySession[session]
}

// hold is Hold with l.mu held.
func (l *Ledger) hold(session string, c Claim) {
	l.unwait(c.Waiter)
	if h, ok := l.held[c.Holder]; ok {
		h.session = session
		l.held[c.Holder] = h
		return
	}
	l.held[c.Holder] = holding{req: c.Request, session: session}
	l.used = l.used.Add(c.Request)
}

// Bind marks holder's attempt as started: its room now outlives the
// session that took it, until Release.
func (l *Ledger) Bind(holder string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.held[holder]; ok {
		h.bound = true
		l.held[holder] = h
	}
}

// Exited records that holder's attempt has ended. Its room stays taken
// until its engine has recorded the end and releases it, unless that
// engine is gone: then it goes back now.
func (l *Ledger) Exited(holder string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.held[holder]
	switch {
	case !ok:
	case l.ended[h.session]:
		l.used = l.used.Sub(h.req)
		delete(l.held, holder)
	default:
		h.exited = true
		l.held[holder] = h
	}
}

// Release gives back the room of each holder; unknown holders are
// ignored, so releasing twice is harmless.
func (l *Ledger) Release(holders ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.release(holders)
}

// release is Release with l.mu held.
func (l *Ledger) release(holders []string) {
	for _, h := range holders {
		if got, ok := l.held[h]; ok {
			l.used = l.used.Sub(got.req)
			delete(l.held, h)
		}
	}
}

// Withdraw removes waiters that no longer wait (their node started some
// other way, was skipped, or its run ended).
func (l *Ledger) Withdraw(waiters ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range waiters {
		l.unwait(w)
	}
}

// EndSession forgets what session asked for: its waiters, and the room it
// took for attempts that never started or have exited. Room of its
// attempts still running goes back when they exit.
func (l *Ledger) EndSession(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended[session] = true
	for k, h := range l.held {
		if h.session == session && (!h.bound || h.exited) {
			l.used = l.used.Sub(h.req)
			delete(l.held, k)
		}
	}
	for k, w := range l.waiting {
		if w.session == session {
			l.unwait(k)
		}
	}
}

// Used returns what every holder holds together.
func (l *Ledger) Used() Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}

// Waiting returns the waiters, sorted, for tests and diagnostics.
func (l *Ledger) Waiting() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.waiting))
	for k := range l.waiting {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// topAbove reports whether anything waits at a priority above p.
func (l *Ledger) topAbove(p int32) bool {
	for prio, n := range l.byPrio {
		if n > 0 && prio > p {
			return true
		}
	}
	return false
}

func (l *Ledger) wait(key string, w waiter) {
	l.unwait(key)
	l.waiting[key] = w
	l.byPrio[w.prio]++
	l.bySession[w.session]++
}

func (l *Ledger) unwait(key string) {
	old, ok := l.waiting[key]
	if !ok {
		return
	}
	delete(l.waiting, key)
	if l.byPrio[old.prio]--; l.byPrio[old.prio] == 0 {
		delete(l.byPrio, old.prio)
	}
	if l.bySession[old.session]--; l.bySession[old.session] == 0 {
		delete(l.bySession, old.session)
	}
}
