package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/resource"
)

// growPoll is how often a running flexible gang below its MaxHosts asks
// the pool whether one more host fits.
const growPoll = 2 * time.Second

// Resizer is a Pool that can change the room a running attempt holds
// (resource.Ledger.Resize): a flexible gang gives back a lost host's
// room, and takes a host's more when it grows, never waiting for it.
type Resizer interface {
	Resize(ctx context.Context, c resource.Claim) (bool, error)
}

// join is a host to start in node's running attempt.
type join struct{ node, host int }

// grow adds a host to each running flexible gang below its MaxHosts, at
// most every growPoll, when the pool has room for one more now and the
// backend can start it in the running attempt; the host joins once the
// round is saved. Ready nodes were admitted first, in this round.
func (ad *admission) grow(ctx context.Context, r *round) error {
	rs := r.rs
	_, joins := backend.As[backend.Joiner](ad.backend)
	resizer, resizes := ad.pool.(Resizer)
	if !joins || !resizes || r.suspend || rs.stopping != "" {
		return nil
	}
	if rs.growAt == nil {
		rs.growAt = map[int]time.Time{}
	}
	for i := range rs.growAt {
		if !rs.active[i] {
			delete(rs.growAt, i)
		}
	}
	var errs []error
	for i := range rs.active {
		if !rs.mayGrow(i, r.now) || slices.Contains(r.shrink, i) { // a lost host's room goes back first
			continue
		}
		rs.growAt[i] = r.now
		ok, err := resizer.Resize(ctx, rs.sizedClaim(i, rs.liveHosts(i)+1))
		if err != nil {
			errs = append(errs, fmt.Errorf("asking room for one more host of %s: %w", rs.nodes[i].status.Name, err))
			continue
		}
		if ok {
			errs = append(errs, ad.joined(ctx, r, i, resizer))
		}
	}
	return errors.Join(errs...)
}

// mayGrow reports whether node i runs a flexible gang below its MaxHosts
// that may ask for a host now: launched at least growPoll ago, not being
// stopped, not asked within growPoll.
func (rs *runState) mayGrow(i int, now time.Time) bool {
	ns, t := rs.nodes[i], &rs.plan.Tasks[i]
	if t.MaxHosts <= 0 || ns.attempt.Nodes == 0 || ns.stop != "" || ns.spec == nil || rs.liveHosts(i) >= t.MaxHosts {
		return false
	}
	return now.Sub(rs.growFrom(i)) >= growPoll
}

// growFrom is when node i last asked for a host, or its attempt started.
func (rs *runState) growFrom(i int) time.Time {
	from := startOf(rs.nodes[i].attempt.StartedAt)
	if at := rs.growAt[i]; at.After(from) {
		from = at
	}
	return from
}

// joined records that node i's gang took room for one more host: the
// host, after every host it ever had, joins with the spec rebuilt for it.
func (ad *admission) joined(ctx context.Context, r *round, i int, resizer Resizer) error {
	rs := r.rs
	ns := rs.nodes[i]
	host := rs.specHosts(i)
	spec, err := ad.build(ctx, rs, i, ns.attempt.Number, host+1)
	if err != nil {
		_, back := resizer.Resize(ctx, rs.heldClaim(i))
		return errors.Join(fmt.Errorf("building %s with one more host: %w", ns.status.Name, err), back)
	}
	ns.attempt.Joined++
	ns.spec = spec
	r.setAttempt(i)
	r.joins = append(r.joins, join{i, host})
	r.events = append(r.events, apiv1.Event{
		Node: ns.status.Name, Attempt: ns.attempt.Number, Phase: ns.status.Phase, Reason: "HostJoined", Time: r.now,
		Message: fmt.Sprintf("host %d joined: room came back for it; the gang runs on %d hosts", host, rs.liveHosts(i)),
	})
	return nil
}

// resizeAndJoin, after the round was saved, gives back the room of the
// hosts flexible gangs lost and starts the hosts that joined.
func (ad *admission) resizeAndJoin(ctx context.Context, r *round) error {
	var errs []error
	if resizer, ok := ad.pool.(Resizer); ok {
		for _, i := range r.shrink {
			if !r.rs.active[i] {
				continue
			}
			if _, err := resizer.Resize(ctx, r.rs.heldClaim(i)); err != nil {
				errs = append(errs, fmt.Errorf("giving back a lost host's room: %w", err))
			}
			r.freed = true
		}
	}
	if joiner, ok := backend.As[backend.Joiner](ad.backend); ok {
		for _, j := range r.joins {
			if ns := r.rs.nodes[j.node]; r.rs.active[j.node] && ns.spec != nil {
				if err := joiner.Join(ctx, ns.spec, j.host); err != nil {
					errs = append(errs, fmt.Errorf("starting host %d of %s: %w", j.host, ns.spec.ID, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// growWake is when a running flexible gang below its MaxHosts asks for a
// host again.
func (ad *admission) growWake(rs *runState, consider func(time.Time)) {
	_, joins := backend.As[backend.Joiner](ad.backend)
	_, resizes := ad.pool.(Resizer)
	if !joins || !resizes {
		return
	}
	for i := range rs.active {
		ns, t := rs.nodes[i], &rs.plan.Tasks[i]
		if t.MaxHosts > 0 && ns.attempt.Nodes > 0 && ns.stop == "" && rs.liveHosts(i) < t.MaxHosts {
			consider(rs.growFrom(i).Add(growPoll))
		}
	}
}

// rejoin has the hosts that joined node i's running attempt started
// again, after the engine rebuilt its spec (a restart): one whose start
// was saved but never reached the backend starts now; the backend skips
// those it has.
func (r *round) rejoin(i int) {
	a := &r.rs.nodes[i].attempt
	for h := a.Nodes; h < a.Nodes+a.Joined; h++ {
		r.joins = append(r.joins, join{i, h})
	}
}
