package controller

import (
	"context"
	"fmt"
	"log/slog"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/resource"
)

// admission is where ready nodes take their room: it asks the pool about
// a run's ready nodes in one call a round, gives back the room of ended
// attempts, keeps the projects' run limits, has attempts the pool names
// preempted, and grows running flexible gangs. It starts the nodes the
// pool admits with start, and rebuilds a growing gang's spec with build.
type admission struct {
	pool    Pool
	backend backend.Backend
	runs    *Runs
	room    *roomWaits  // runs waiting for room, and what the pool last said was free
	quota   *quotaState // run limits of the projects' quotas (quota.go)
	log     *slog.Logger
	start   func(ctx context.Context, r *round, i, hosts int)
	build   func(ctx context.Context, rs *runState, i, number, hosts int) (*job.Spec, error)
}

const (
	// maxClaims is how many ready nodes one call asks the pool about.
	maxClaims = 64
	// maxMisfits is how many ready nodes that cannot fit a round looks past
	// for smaller ones that can, so a round stays cheap with a long queue.
	maxMisfits = 16
	// maxAdmitCalls bounds the calls to the pool in one round.
	maxAdmitCalls = 4
)

// admit gives back the room of attempts that ended in this round and asks
// the pool about the run's ready nodes, in admission order, in one call:
// those admitted start, the others wait, each showing why. It asks only
// about nodes that can fit in what the pool last said was free (always
// about the first, so the pool knows what waits), and asks again while
// the pool's answer says more room is free than that guess, or that room
// was granted to this engine's waiting nodes. A node's admission timeout
// is checked by timeouts.
func (ad *admission) admit(ctx context.Context, r *round) error {
	rs := r.rs
	if rs.stopping == apiv1.PhaseCancelling || rs.ready.Len() == 0 { // a failing run starts only what runs on failure
		rs.fresh = rs.fresh[:0]
		return ad.giveBack(ctx, r)
	}
	if handed, err := ad.handOver(ctx, r); handed || err != nil {
		return err
	}
	est := ad.room.freeGuess().Add(r.releasedRoom)
	last := resource.Admission{Free: est}
	var tried []readyItem
	taken, broad := map[int]bool{}, ad.quota.quotasOn() // with quotas every ready node waits in the pool's queue, for its project's fair share
	restore := func() {
		for _, it := range tried {
			if !taken[it.node] {
				rs.ready.restore(it)
			}
		}
	}
	for calls := 0; calls < maxAdmitCalls; calls++ {
		batch := r.pick(&tried, est, broad)
		if len(batch) == 0 && len(r.released) == 0 {
			break
		}
		answers, err := ad.ask(ctx, r, batch)
		if err != nil {
			restore()
			return err
		}
		for k, it := range batch {
			if last = answers[k]; last.Admitted {
				taken[it.node] = true
				holder := rs.nextClaim(it.node).Holder
				if rs.nodes[it.node].status.Phase.Done() { // ended in this batch: the run stopped when an attempt could not start
					r.released = append(r.released, holder)
					continue
				}
				r.admitted = append(r.admitted, holder) // given back if the round is not saved
				ad.start(ctx, r, it.node, rs.hostsAdmitted(it.node, last.Steps))
				continue
			}
			r.starved = true
			r.markWaiting(it.node, last)
			if len(last.Preempt) > 0 {
				ad.preempt(r, it.node, last.Preempt)
			}
		}
		est = last.Free
		ad.room.setFreeGuess(est)
		if last.Granted > 0 && !broad { // room was granted to waiting nodes: ask about them all, whatever is free
			restore()
			tried, broad = tried[:0], true
			continue
		}
		if next, ok := rs.ready.peek(); !ok || !rs.plan.Tasks[next.node].Least().Fits(est) {
			break
		}
	}
	r.granted = last.Granted > 0
	restore()
	r.showWaiting(last)
	return ad.giveBack(ctx, r) // the room of attempts that could not start
}

// pick pops ready nodes to ask the pool about: the first, and then those
// that fit in est, looking past at most maxMisfits that do not; with all,
// every node up to maxClaims (room may be granted to any of them). Every
// node popped goes into tried, to be put back unless it starts. While the
// run is suspended, nodes are suspended instead: nothing new starts.
func (r *round) pick(tried *[]readyItem, est resource.Request, all bool) []readyItem {
	rs := r.rs
	var batch []readyItem
	misfits := 0
	for len(batch) < maxClaims && rs.ready.Len() > 0 {
		it := rs.ready.pop()
		if r.suspend && rs.stopCode != apiv1.CodeStopped && !rs.stopLate { // a stop's exit handlers run
			r.suspendNode(it.node, "suspended before it started")
			continue
		}
		if r.holdShare(it.node) {
			continue
		}
		*tried = append(*tried, it)
		req := rs.plan.Tasks[it.node].Least()
		if len(batch) > 0 && !all && !req.Fits(est) {
			if misfits++; misfits >= maxMisfits || !rs.plan.MinRequest.Fits(est) {
				break
			}
			continue
		}
		batch = append(batch, it)
		est = est.Sub(req)
	}
	return batch
}

// ask gives back the round's released room and asks the pool about
// batch's nodes, in one call.
func (ad *admission) ask(ctx context.Context, r *round, batch []readyItem) ([]resource.Admission, error) {
	claims := make([]resource.Claim, len(batch))
	for k, it := range batch {
		claims[k] = r.rs.nextClaim(it.node)
	}
	answers, err := ad.pool.Admit(ctx, r.released, claims)
	if err != nil {
		return nil, fmt.Errorf("admitting ready nodes: %w", err)
	}
	r.freed = r.freed || len(r.released) > 0
	r.released = nil
	return answers, nil
}

// handOver gives the room of the attempts that ended in this round
// straight to the run's first ready node when nothing else waits for room
// (no other run of this engine, and no other engine as far as the pool
// knows) and nothing more could start: a run alone on the machine pays no
// call to the pool a round. It reports false when the round must ask.
func (ad *admission) handOver(ctx context.Context, r *round) (bool, error) {
	rs := r.rs
	if len(r.released) == 0 || r.suspend || rs.part != nil || ad.room.othersStarved(rs.run.ID) || ad.quota.quotasOn() {
		return false, nil
	}
	it, _ := rs.ready.peek()
	req, free := rs.plan.Tasks[it.node].Request, ad.room.freeGuess()
	more := rs.ready.Len() > 1 && rs.plan.MinRequest.Fits(free.Add(r.releasedRoom).Sub(req))
	if !req.Fits(r.releasedRoom) || more {
		return false, nil
	}
	cl := rs.nextClaim(it.node).Sized(0) // whole: the room handed over fits it
	handed, err := ad.pool.HandOver(ctx, cl, r.released)
	if err != nil {
		return false, fmt.Errorf("handing room over to %s: %w", cl.Holder, err)
	}
	if !handed {
		return false, nil
	}
	rs.ready.pop()
	r.released, r.releasedRoom = nil, resource.Request{}
	r.admitted = append(r.admitted, cl.Holder) // given back if the round is not saved
	ad.start(ctx, r, it.node, rs.hostsAdmitted(it.node, 0))
	r.showWaiting(resource.Admission{Free: free})
	r.starved = r.starved || rs.ready.Len() > 0 // told when room comes back elsewhere
	return true, nil
}

// giveBack gives back the round's released room when there is nothing to
// admit.
func (ad *admission) giveBack(ctx context.Context, r *round) error {
	if len(r.released) == 0 {
		return nil
	}
	if err := ad.pool.Release(ctx, r.released...); err != nil {
		return fmt.Errorf("giving back the room of ended attempts: %w", err)
	}
	r.freed, r.released = true, nil
	return nil
}

// nextClaim is node i's claim on the pool for its next attempt.
func (rs *runState) nextClaim(i int) resource.Claim {
	return rs.claim(i, rs.nodes[i].attempt.Number+1)
}

// claim is node i's claim on the pool for its attempt number n.
func (rs *runState) claim(i, n int) resource.Claim {
	t := &rs.plan.Tasks[i]
	c := resource.Claim{
		Project:  projectOf(rs.run),
		Holder:   rs.attemptID(i, n).String(),
		Waiter:   rs.waiter(i),
		Request:  t.Request,
		Priority: t.Spec.Priority,
	}
	if t.MaxHosts > 0 {
		c.Step, c.Steps = t.PerHost, t.MaxHosts-t.MinHosts
	}
	return c
}

// showWaiting shows, for every node that became ready and is still
// queued, why it waits: the same reason as the last node the pool
// answered, which was ahead of it.
func (r *round) showWaiting(last resource.Admission) {
	rs := r.rs
	for _, i := range rs.fresh {
		if rs.ready.has(i) && !rs.nodes[i].waiting {
			r.starved = true
			r.markWaiting(i, last)
		}
	}
	rs.fresh = rs.fresh[:0]
}

// markWaiting shows node i as waiting for room, and why, once each time
// it becomes ready; its admission timeout counts from the first time.
func (r *round) markWaiting(i int, a resource.Admission) {
	ns := r.rs.nodes[i]
	if ns.waiting {
		return
	}
	ns.waiting = true
	if ns.waitingSince.IsZero() {
		ns.waitingSince = r.now
	}
	t := &r.rs.plan.Tasks[i]
	if t.AdmissionTimeout > 0 {
		r.rs.queued[i] = true
	}
	if a.Quota != "" {
		r.setNode(i, apiv1.PhaseWaiting, "WaitingForQuota", apiv1.CodeQuotaWait, a.Quota)
		return
	}
	r.setNode(i, apiv1.PhaseWaiting, "WaitingForResources", "", r.rs.waits.text(a, t.Least(), t.Spec.Priority))
}
