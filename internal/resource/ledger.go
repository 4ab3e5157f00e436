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
	// Project owns the claim: its quota (see Quota) bounds what the
	// project's claims hold together, and orders its waiters among other
	// projects'. "" is a project like any other.
	Project string
	// Priority orders the waiting: while anything of a higher priority
	// waits, no claim of a lower one is admitted.
	Priority int32
	// Step and Steps make the claim flexible (an elastic gang, which may
	// start with fewer hosts): when Request does not fit, Request less
	// one Step is tried, then less two, down to less Steps of them, and
	// the largest that fits is taken, all or nothing. Steps 0 (the
	// default) takes Request whole or waits.
	Step  Request
	Steps int
}

// Less returns c's request with steps Steps taken off.
func (c Claim) Less(steps int) Request {
	return c.Request.Sub(Request{c.Step.MilliCPU * int64(steps), c.Step.Memory * int64(steps), c.Step.GPU * int64(steps)})
}

// Least is the smallest room c may be admitted with: Request less all
// of its Steps.
func (c Claim) Least() Request { return c.Less(max(c.Steps, 0)) }

// Sized returns c as it was admitted, steps Steps smaller and no longer
// flexible: what the attempt holds.
func (c Claim) Sized(steps int) Claim {
	c.Request, c.Step, c.Steps = c.Less(steps), Request{}, 0
	return c
}

// fit returns how few Steps must come off c for it to fit in capacity
// beside used, and whether any number of them, up to c.Steps, will do.
func (c Claim) fit(used, capacity Request) (int, bool) {
	for k := 0; k <= max(c.Steps, 0); k++ {
		if c.Less(k).Add(used).Fits(capacity) {
			return k, true
		}
	}
	return 0, false
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
	// Granted counts the asking session's waiters that were granted room
	// (see Ledger) and that it has not asked for since: it should ask
	// about its waiting nodes whatever it thinks is free.
	Granted int
	// Steps is how many of a flexible claim's Steps were taken off the
	// room held for it (see Claim.Step); 0 for a claim taken whole.
	Steps int
	// Quota says, for a claim not admitted, that its project's quota holds
	// it back, and how ("" when it waits for room or priority).
	Quota string
	// QuotaNever is set with Quota when the quota can never admit the
	// claim as it stands: it asks more than the project's whole quota,
	// which it may not borrow beyond.
	QuotaNever bool
	// Preempt names running holders of the asking session to evict so the
	// claim can be admitted (see Quota.Preempt): the engine stops them,
	// and the room they give back goes to the claim, which waits.
	Preempt []string
}

// Ledger is the book of one machine's resources: who holds what, and
// who waits in which order. Every engine working on one kiln home admits
// against the same ledger (the supervisor keeps it), so their tasks never
// oversubscribe the machine together. Each engine admits within its own
// capacity (its --cpus, --memory, --gpus), counted against everything
// every engine holds.
//
// Waiters wait in one queue, higher priority first, then first come.
// When room comes back, the ledger grants it to the waiters at the front
// of the queue that fit, holding it for the attempt each asked for, and
// tells their engines (Granted): an engine whose task ends does not keep
// the room for its own next task while another run's task waited longer.
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
	mu      sync.Mutex
	used    Request
	held    map[string]holding
	queue   *queue
	granted map[string]grant  // by waiter: room granted and not yet asked for
	unasked map[string]int    // per session, its waiters' grants not yet asked for
	grants  map[string]uint64 // per session, how many times room was granted to it
	changed chan struct{}     // closed and replaced on every grant
	ended   map[string]bool   // sessions that ended
	quotas  map[string]Quota  // by project; see SetQuotas
	usage   map[string]Request
	seq     uint64 // counts holdings taken, latest last
}

type holding struct {
	req     Request
	steps   int // taken off a flexible claim
	session string
	bound   bool // the attempt started
	exited  bool // and its processes are gone

	project   string
	priority  int32
	seq       uint64 // when it was taken
	preempted bool   // named as a victim once
}

// grant is room held for a waiter whose engine has not asked for it yet.
type grant struct{ holder, session string }

// maxGrantScan bounds how far into the queue one grant looks.
const maxGrantScan = 64

// NewLedger returns an empty ledger.
func NewLedger() *Ledger {
	return &Ledger{
		held: map[string]holding{}, queue: newQueue(), granted: map[string]grant{}, unasked: map[string]int{},
		grants: map[string]uint64{}, changed: make(chan struct{}), ended: map[string]bool{},
		usage: map[string]Request{},
	}
}

// Admit answers claims in order, within capacity. A claim is admitted
// when nothing of a higher priority waits and its request fits in what
// capacity leaves beside everything held; otherwise its waiter waits, at
// its priority, until room is granted to it, a later Admit admits it, or
// it is withdrawn. Among equal priorities a claim that fits may pass one
// that does not. A claim whose holder already holds room (room granted
// to it, say) is admitted at no cost.
func (l *Ledger) Admit(session string, capacity Request, claims []Claim) []Admission {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Admission, len(claims))
	if l.fair() {
		l.grantFair() // waiters first, in fair order
	}
	for i, c := range claims {
		out[i] = l.admit(session, capacity, c)
		out[i].Free, out[i].Contended = capacity.Sub(l.used), l.queue.others(session)
		out[i].Granted = l.unasked[session]
	}
	return out
}

// admit answers one claim. l.mu must be held.
func (l *Ledger) admit(session string, capacity Request, c Claim) Admission {
	l.regrant(c)
	if h, ok := l.held[c.Holder]; ok {
		l.unwait(c.Waiter)
		return Admission{Admitted: true, Steps: h.steps}
	}
	if !l.fair() {
		outranked := l.queue.topAbove(c.Priority)
		if k, fits := c.fit(l.used, capacity); !outranked && fits {
			l.hold(session, c, k)
			return Admission{Admitted: true, Steps: k}
		}
		l.queue.put(waiter{key: c.Waiter, session: session, claim: c, capacity: capacity})
		return Admission{Outranked: outranked}
	}
	return l.admitFair(session, capacity, c)
}

// admitFair is admit with projects in the queue: c is admitted only if
// nothing that its quota lets in waits at a higher priority, it fits and
// its quota allows it (Admit granted room to the waiters that fit, in
// fair order, first). Otherwise it waits, and may name victims.
func (l *Ledger) admitFair(session string, capacity Request, c Claim) Admission {
	outranked := l.outranked(c.Priority)
	k, fits, block := l.fitFor(c, capacity, l.withinWaiting())
	if !outranked && fits {
		l.hold(session, c, k)
		return Admission{Admitted: true, Steps: k}
	}
	l.queue.put(waiter{key: c.Waiter, session: session, claim: c, capacity: capacity})
	a := Admission{Outranked: outranked && block == "", Quota: block}
	a.QuotaNever = block != "" && l.quotaNever(c.Project, c.Less(max(c.Steps, 0)))
	if !fits || outranked {
		a.Preempt = l.victims(session, capacity, c)
	}
	return a
}

// Hold takes c's room for its holder whether it fits or not, and its
// waiter waits no more: an engine adopting an attempt that was running
// before it started counts what the attempt holds. If the holder holds
// room already, the session takes it over.
func (l *Ledger) Hold(session string, c Claim) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hold(session, c, 0)
}

// HandOver gives the room of release's holders, attempts of session that
// ended, straight to c's holder, if no other session waits for room;
// otherwise it changes nothing and reports false, and the engine asks.
func (l *Ledger) HandOver(session string, c Claim, release []string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.queue.others(session) || l.fair() && l.queue.othersThan(c.Project) {
		return false
	}
	l.hold(session, c, 0)
	l.release(release)
	return true
}

// Contended reports whether another session than session waits for room.
func (l *Ledger) Contended(session string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.queue.others(session)
}

// Granted returns how many times room was granted to session's waiters,
// how many of those grants session has not asked for yet, and a channel
// closed at the next grant to anyone.
func (l *Ledger) Granted(session string) (grants uint64, unasked int, next <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.grants[session], l.unasked[session], l.changed
}

// hold is Hold with l.mu held, for c less steps of its Steps.
func (l *Ledger) hold(session string, c Claim, steps int) {
	l.regrant(c)
	l.unwait(c.Waiter)
	if h, ok := l.held[c.Holder]; ok {
		h.session = session
		l.held[c.Holder] = h
		return
	}
	req := c.Less(steps)
	l.seq++
	l.held[c.Holder] = holding{req: req, steps: steps, session: session, project: c.Project, priority: c.Priority, seq: l.seq}
	l.used = l.used.Add(req)
	l.usage[c.Project] = l.usage[c.Project].Add(req)
}

// drop forgets holder's holding and what it counted. l.mu must be held.
func (l *Ledger) drop(holder string, h holding) {
	l.used = l.used.Sub(h.req)
	if u := l.usage[h.project].Sub(h.req); u == (Request{}) {
		delete(l.usage, h.project)
	} else {
		l.usage[h.project] = u
	}
	delete(l.held, holder)
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
		l.release([]string{holder})
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

// release is Release with l.mu held: the room goes to whoever waits for
// it first.
func (l *Ledger) release(holders []string) {
	freed := false
	for _, h := range holders {
		if got, ok := l.held[h]; ok {
			l.drop(h, got)
			freed = true
		}
	}
	if freed {
		l.grant()
	}
}

// grant gives room to the waiters at the front of the queue that fit,
// within their engine's capacity, holding it for the attempt each asked
// for. A waiter that does not fit holds up every lower priority; equal
// priorities may pass it.
func (l *Ledger) grant() {
	if l.fair() {
		l.grantFair()
		return
	}
	var blocked *int32
	for i, scanned := 0, 0; i < len(l.queue.order) && scanned < maxGrantScan; scanned++ {
		w := l.queue.order[i]
		if blocked != nil && w.claim.Priority < *blocked {
			return
		}
		k, fits := w.claim.fit(l.used, w.capacity)
		if !fits {
			if blocked == nil {
				p := w.claim.Priority
				blocked = &p
			}
			i++
			continue
		}
		l.grantTo(w, k)
	}
}

// grantTo holds room for w's claim less k Steps, and tells its engine.
// l.mu must be held.
func (l *Ledger) grantTo(w *waiter, k int) {
	l.hold(w.session, w.claim, k) // takes it out of the queue
	l.granted[w.key] = grant{w.claim.Holder, w.session}
	l.unasked[w.session]++
	l.grants[w.session]++
	close(l.changed)
	l.changed = make(chan struct{})
}

// Withdraw removes waiters that no longer wait (their node started some
// other way, was skipped, or its run ended), with room granted to them
// that their engine never asked for.
func (l *Ledger) Withdraw(waiters ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var unasked []string
	for _, w := range waiters {
		if g, ok := l.granted[w]; ok && !l.held[g.holder].bound {
			unasked = append(unasked, g.holder)
		}
		l.unwait(w)
	}
	l.release(unasked)
}

// EndSession forgets what session asked for: its waiters, and the room it
// took for attempts that never started or have exited. Room of its
// attempts still running goes back when they exit.
func (l *Ledger) EndSession(session string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended[session] = true
	for _, w := range slices.Clone(l.queue.order) {
		if w.session == session {
			l.unwait(w.key)
		}
	}
	for w, g := range l.granted {
		if g.session == session {
			delete(l.granted, w)
		}
	}
	delete(l.unasked, session)
	var gone []string
	for k, h := range l.held {
		if h.session == session && (!h.bound || h.exited) {
			gone = append(gone, k)
		}
	}
	delete(l.grants, session)
	l.release(gone)
}

// Used returns what every holder holds together.
func (l *Ledger) Used() Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used
}

// Waiting returns the waiters in admission order, for tests and
// diagnostics.
func (l *Ledger) Waiting() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.queue.order))
	for i, w := range l.queue.order {
		out[i] = w.key
	}
	return out
}

// regrant drops room granted to c's waiter for another holder than c's
// (its engine now asks for another attempt of the node, or another
// request): the room goes back without a new grant, and c is answered as
// any claim. l.mu must be held.
func (l *Ledger) regrant(c Claim) {
	g, ok := l.granted[c.Waiter]
	if !ok || g.holder == c.Holder {
		return
	}
	if h, ok := l.held[g.holder]; ok && !h.bound {
		l.drop(g.holder, h)
	}
	l.unwait(c.Waiter)
}

// unwait takes key out of the queue; room granted to it was asked for.
func (l *Ledger) unwait(key string) {
	l.queue.remove(key)
	if g, ok := l.granted[key]; ok {
		delete(l.granted, key)
		if l.unasked[g.session]--; l.unasked[g.session] <= 0 {
			delete(l.unasked, g.session)
		}
	}
}
