package resource

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Unlimited in a field of Quota.Nominal leaves that resource unlimited.
const Unlimited = -1

// Quota is a project's share of a ledger, as a Kueue ClusterQueue is a
// namespace's: what the project's claims may hold together (Nominal),
// whether they may go beyond it into capacity no one else needs
// (Borrowing), their weight in fair sharing, and whether a waiting claim
// may name running ones to evict (Preempt). A project without a quota
// has no nominal limit, weight 1, and never preempts.
type Quota struct {
	// Nominal is the project's quota; a field at Unlimited (or below 0)
	// is not limited.
	Nominal Request
	// Borrowing lets claims beyond Nominal be admitted while no claim
	// of another project that is within its own quota waits.
	Borrowing bool
	// Weight is the project's weight in fair sharing; below 1 counts as 1.
	Weight int64
	// Preempt lets a waiting claim of the project evict running claims
	// of lower priority of the same project, and, while the project is
	// within its quota, claims of projects beyond theirs.
	Preempt bool
}

// NoQuota is the quota of a project that has none.
var NoQuota = Quota{Nominal: Request{Unlimited, Unlimited, Unlimited}, Borrowing: true, Weight: 1}

// within reports whether used fits in q's nominal quota.
func (q Quota) within(used Request) bool {
	n := q.Nominal
	return (n.MilliCPU < 0 || used.MilliCPU <= n.MilliCPU) && (n.Memory < 0 || used.Memory <= n.Memory) && (n.GPU < 0 || used.GPU <= n.GPU)
}

// SetQuotas replaces every project's quota; projects not in quotas have
// NoQuota. Room the new quotas allow is granted to whoever waits.
func (l *Ledger) SetQuotas(quotas map[string]Quota) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.quotas = quotas
	l.grant()
}

// quota returns project's quota. l.mu must be held.
func (l *Ledger) quota(project string) Quota {
	if q, ok := l.quotas[project]; ok {
		return q
	}
	return NoQuota
}

// fair reports whether admission must look at projects: quotas are set
// or more than one project waits. Otherwise the ledger is first come,
// first served within priority, as it always was. l.mu must be held.
func (l *Ledger) fair() bool {
	return len(l.quotas) > 0 || len(l.queue.byProject) > 1
}

// share is project's dominant resource share within capacity, divided by
// its weight: the larger of its cpu, memory and gpu use as fractions of
// capacity. The waiting project of the lowest share goes first.
func (l *Ledger) share(project string, capacity Request) float64 {
	u := l.usage[project]
	s := 0.0
	for _, p := range [][2]int64{{u.MilliCPU, capacity.MilliCPU}, {u.Memory, capacity.Memory}, {u.GPU, capacity.GPU}} {
		if p[1] > 0 {
			s = max(s, float64(p[0])/float64(p[1]))
		}
	}
	return s / float64(max(l.quota(project).Weight, 1))
}

// quotaBlock says why req of project may not be admitted now as far as
// quotas go, or "" if it may: it is within the project's quota, or the
// project may borrow and no claim of another project within its own
// quota waits (within counts them by project). l.mu must be held.
func (l *Ledger) quotaBlock(project string, req Request, within map[string]int) string {
	q := l.quota(project)
	used := l.usage[project]
	if q.within(used.Add(req)) {
		return ""
	}
	if l.quotaNever(project, req) {
		return fmt.Sprintf("this task needs %s, more than project %s's whole quota of %s, which it may not borrow beyond: it cannot start unless the quota is raised",
			limited(req, q.Nominal), project, limited(q.Nominal, q.Nominal))
	}
	if q.Borrowing && within[""]-within[project] == 0 {
		return ""
	}
	how := "its quota is used up"
	if q.Borrowing {
		how = "it may borrow spare capacity only while no other project within its quota waits"
	}
	return fmt.Sprintf("project %s uses %s of its quota of %s; this task needs %s more, and %s",
		project, limited(used, q.Nominal), limited(q.Nominal, q.Nominal), limited(req, q.Nominal), how)
}

// quotaNever reports whether project's quota can never admit req: it
// is more than the whole quota, which the project may not borrow beyond.
// l.mu must be held.
func (l *Ledger) quotaNever(project string, req Request) bool {
	q := l.quota(project)
	return !q.Borrowing && !q.within(req)
}

// limited formats r's resources that nominal limits: "cpu 2, gpu 1".
func limited(r, nominal Request) string {
	var parts []string
	for _, f := range []struct {
		limit int64
		part  string
	}{
		{nominal.MilliCPU, strings.SplitN(r.String(), ", ", 3)[0]},
		{nominal.Memory, strings.SplitN(r.String(), ", ", 3)[1]},
		{nominal.GPU, strings.SplitN(r.String(), ", ", 3)[2]},
	} {
		if f.limit >= 0 {
			parts = append(parts, f.part)
		}
	}
	return strings.Join(parts, ", ")
}

// withinWaiting counts the waiters whose claims are within their
// project's quota, by project, and all of them under "". l.mu must be held.
func (l *Ledger) withinWaiting() map[string]int {
	out := map[string]int{}
	if len(l.quotas) == 0 {
		return out // no project can borrow: every one is within
	}
	for _, w := range l.queue.order {
		p := w.claim.Project
		if l.quota(p).within(l.usage[p].Add(w.claim.Least())) {
			out[p]++
			out[""]++
		}
	}
	return out
}

// fitFor is c.fit within quotas too: how few Steps must come off c for it
// to fit beside used in capacity and be allowed by its project's quota,
// and if none, why the quota holds it ("" when capacity does).
func (l *Ledger) fitFor(c Claim, capacity Request, within map[string]int) (steps int, fits bool, block string) {
	for k := 0; k <= max(c.Steps, 0); k++ {
		req := c.Less(k)
		if !req.Add(l.used).Fits(capacity) {
			continue
		}
		if b := l.quotaBlock(c.Project, req, within); b != "" {
			block = b
			continue
		}
		return k, true, ""
	}
	return 0, false, block
}

// outranked reports whether a waiter of a priority above p waits that
// its quota lets in: one held back by its own project's quota holds up
// no one else. l.mu must be held.
func (l *Ledger) outranked(p int32) bool {
	if !l.queue.topAbove(p) {
		return false
	}
	if len(l.quotas) == 0 {
		return true
	}
	within := l.withinWaiting()
	for _, w := range l.queue.order {
		if w.claim.Priority <= p {
			return false
		}
		if l.quotaBlock(w.claim.Project, w.claim.Least(), within) == "" {
			return true
		}
	}
	return false
}

// nextFair picks the waiter to grant room to next: of the highest
// priority at which any waiter may be admitted, the one of the project
// with the lowest share (first come among equals). A waiter that does not
// fit in capacity holds up every lower priority; one held back by its
// project's quota holds up no one. It returns nil when none may be
// admitted. l.mu must be held.
func (l *Ledger) nextFair() (*waiter, int) {
	within := l.withinWaiting()
	var best *waiter
	bestSteps, bestShare := 0, 0.0
	var blocked *int32
	for _, w := range l.queue.order {
		if best != nil && w.claim.Priority < best.claim.Priority || blocked != nil && w.claim.Priority < *blocked {
			break
		}
		k, fits, quota := l.fitFor(w.claim, w.capacity, within)
		if !fits {
			if quota == "" && blocked == nil {
				p := w.claim.Priority
				blocked = &p
			}
			continue
		}
		if s := l.share(w.claim.Project, w.capacity); best == nil || s < bestShare {
			best, bestSteps, bestShare = w, k, s
		}
	}
	return best, bestSteps
}

// grantFair grants room in fair order (nextFair) while any waiter may be
// admitted. l.mu must be held.
func (l *Ledger) grantFair() {
	for {
		w, k := l.nextFair()
		if w == nil {
			return
		}
		l.grantTo(w, k)
	}
}

// victims names running holders of session whose eviction would let c
// in, and marks them so no later claim names them again: with c's
// project's Preempt, holders of c's project of a lower priority than c's,
// and, while c is within its project's quota, holders of projects beyond
// their own quota; lowest priority first, latest taken first. It names
// none when evicting every candidate would not be enough. l.mu must be
// held.
func (l *Ledger) victims(session string, capacity Request, c Claim) []string {
	q := l.quota(c.Project)
	if !q.Preempt {
		return nil
	}
	reclaim := q.within(l.usage[c.Project].Add(c.Least()))
	type cand struct {
		holder string
		h      holding
	}
	var cands []cand
	pending := map[string]bool{} // granted, not yet started: nothing to evict
	for _, g := range l.granted {
		pending[g.holder] = true
	}
	for k, h := range l.held {
		if h.session != session || h.preempted || pending[k] || h.priority >= c.Priority && h.project == c.Project {
			continue
		}
		if h.project == c.Project || reclaim && !l.quota(h.project).within(l.usage[h.project]) {
			cands = append(cands, cand{k, h})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.h.priority, b.h.priority), cmp.Compare(b.h.seq, a.h.seq))
	})
	used, usage := l.used, map[string]Request{}
	for _, h := range l.held { // named before: their room is on its way back
		if h.preempted {
			used, usage[h.project] = used.Sub(h.req), usage[h.project].Sub(h.req)
		}
	}
	var out []string
	enough := func() bool {
		return c.Least().Add(used).Fits(capacity) && (q.Borrowing || q.within(usage[c.Project].Add(l.usage[c.Project]).Add(c.Least())))
	}
	for _, v := range cands {
		if enough() {
			break
		}
		if v.h.project != c.Project && l.quota(v.h.project).within(l.usage[v.h.project].Add(usage[v.h.project])) {
			continue // that project is within its quota now: nothing more of it is reclaimed
		}
		used = used.Sub(v.h.req)
		usage[v.h.project] = usage[v.h.project].Sub(v.h.req)
		out = append(out, v.holder)
	}
	if len(out) == 0 || !enough() {
		return nil // enough is on its way back, or evicting is not enough
	}
	for _, k := range out {
		h := l.held[k]
		h.preempted = true
		l.held[k] = h
	}
	return out
}
