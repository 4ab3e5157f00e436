package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
)

// QuotaPool is a Pool that keeps the projects' quotas (see
// resource.Ledger.SetQuotas): both pools are.
type QuotaPool interface {
	SetQuotas(ctx context.Context, quotas map[string]resource.Quota) error
}

// quotaState is what the engine keeps of the projects' quotas itself:
// the limit on each project's started runs, which runs count against it,
// and which wait for it. The pool keeps the rest.
type quotaState struct {
	enqueue func(apiv1.RunID) // has a run go round
	mu      sync.Mutex
	on      bool                                // any project has a quota
	limits  map[string]int                      // spec.runs by project
	started map[string]map[apiv1.RunID]bool     // unfinished runs that started, or may start now, by project
	held    map[string]map[apiv1.RunID]struct{} // runs held Pending by their project's limit
	pushed  bool                                // the last quotas given to the pool were some
}

// SetQuotas takes the projects' stored quotas: their run limits, kept
// here, and the rest, given to the pool. A quota whose spec does not read
// (it was stored by another version) is left out, and the error says so.
// No quotas are given to the pool only to clear those this engine gave
// it before: the pool may be shared with engines of another store (a
// kiln run on the home of a kiln serve on PostgreSQL), whose quotas an
// engine that never had any must not turn off.
func (c *Controller) SetQuotas(ctx context.Context, quotas []apiv1.ProjectQuota) error {
	return c.admission.quota.set(ctx, c.cfg.Pool, quotas)
}

// set takes the projects' quotas (see SetQuotas).
func (qs *quotaState) set(ctx context.Context, pool Pool, quotas []apiv1.ProjectQuota) error {
	ledger, limits := map[string]resource.Quota{}, map[string]int{}
	var bad []string
	for _, q := range quotas {
		rq, err := resource.QuotaOf(q.Spec)
		if err != nil {
			bad = append(bad, q.Metadata.Name)
			continue
		}
		ledger[q.Metadata.Name] = rq
		if q.Spec.Runs > 0 {
			limits[q.Metadata.Name] = q.Spec.Runs
		}
	}
	qs.mu.Lock()
	qs.limits, qs.on = limits, len(ledger) > 0
	push := qs.pushed || len(ledger) > 0
	qs.pushed = len(ledger) > 0
	var wake []apiv1.RunID
	for _, runs := range qs.held {
		for id := range runs {
			wake = append(wake, id)
		}
	}
	qs.mu.Unlock()
	for _, id := range wake {
		qs.enqueue(id)
	}
	var err error
	if p, ok := pool.(QuotaPool); ok && push {
		if err = p.SetQuotas(ctx, ledger); err != nil && len(ledger) == 0 {
			qs.mu.Lock()
			qs.pushed = true // clear them again next time
			qs.mu.Unlock()
		}
	}
	if len(bad) > 0 {
		err = fmt.Errorf("quotas of %s do not read and were left out", strings.Join(bad, ", "))
	}
	return err
}

// quotasOn reports whether any project has a quota: then the pool
// decides who is next among projects, and the engine hands no room over
// between its own attempts without asking.
func (qs *quotaState) quotasOn() bool {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.on
}

// runsQuotaHolds reports whether run rs must stay Pending because its
// project has as many started runs as its quota's spec.runs; if not, a run
// that has not started counts against the limit from now (releaseRunSlot
// gives its place back if it does not start in the round).
func (qs *quotaState) runsQuotaHolds(r *round) bool {
	rs := r.rs
	p, id := projectOf(rs.run), rs.run.ID
	qs.mu.Lock()
	defer qs.mu.Unlock()
	limit := qs.limits[p]
	if limit == 0 || rs.run.Status.StartedAt != nil || rs.stopping != "" || qs.started[p][id] {
		return false
	}
	if n := len(qs.started[p]); n >= limit {
		addTo(&qs.held, p, id)
		msg := fmt.Sprintf("project %s has %d of %d runs running", p, n, limit)
		r.setRun(apiv1.PhasePending, "WaitingForQuota", apiv1.CodeQuotaRunsWait, msg)
		return true
	}
	delete(qs.held[p], id)
	addTo(&qs.started, p, id)
	return false
}

// releaseRunSlot gives back the place a run took against its project's
// run limit if it still has not started.
func (qs *quotaState) releaseRunSlot(rs *runState) {
	if rs.run.Status.StartedAt != nil {
		return
	}
	qs.dropRun(rs, false)
}

// noteRun counts a started, unfinished run against its project's limit
// (an engine that adopts runs counts them too).
func (qs *quotaState) noteRun(rs *runState) {
	if rs.run.Status.StartedAt == nil || rs.run.Status.Phase.Done() {
		return
	}
	qs.mu.Lock()
	addTo(&qs.started, projectOf(rs.run), rs.run.ID)
	qs.mu.Unlock()
}

// dropRun stops counting rs against its project's limit; when it ended
// (gone), the runs its limit holds go round again.
func (qs *quotaState) dropRun(rs *runState, gone bool) {
	p, id := projectOf(rs.run), rs.run.ID
	qs.mu.Lock()
	_, counted := qs.started[p][id]
	delete(qs.started[p], id)
	if gone {
		delete(qs.held[p], id)
	}
	var wake []apiv1.RunID
	if counted && gone {
		for w := range qs.held[p] {
			wake = append(wake, w)
		}
	}
	qs.mu.Unlock()
	for _, w := range wake {
		qs.enqueue(w)
	}
}

func addTo[T any](m *map[string]map[apiv1.RunID]T, p string, id apiv1.RunID) {
	if *m == nil {
		*m = map[string]map[apiv1.RunID]T{}
	}
	if (*m)[p] == nil {
		(*m)[p] = map[apiv1.RunID]T{}
	}
	var zero T
	(*m)[p][id] = zero
}

// preempt has the attempts the pool named stopped, for node i of r's run
// that waits for their room: those of r's run now, those of other runs
// in their own rounds.
func (ad *admission) preempt(r *round, i int, victims []string) {
	msg := fmt.Sprintf("preempted by %s (priority %d)", r.rs.waiter(i), r.rs.plan.Tasks[i].Spec.Priority)
	for _, v := range victims {
		run := apiv1.RunID(v[:max(strings.IndexByte(v, '/'), 0)])
		if run == r.rs.run.ID {
			r.preemptHere(v, msg)
			continue
		}
		rs := ad.runs.get(run)
		if rs == nil {
			ad.log.Warn("a preemption victim's run is not this engine's", "attempt", v)
			continue
		}
		rs.mu.Lock()
		if rs.preempts == nil {
			rs.preempts = map[string]string{}
		}
		rs.preempts[v] = msg
		rs.mu.Unlock()
		ad.runs.enqueue(run)
	}
}

// preemptions stops the attempts of r's run that other runs' nodes
// preempted.
func (r *round) preemptions() {
	rs := r.rs
	rs.mu.Lock()
	got := rs.preempts
	rs.preempts = nil
	rs.mu.Unlock()
	for v, msg := range got {
		r.preemptHere(v, msg)
	}
}

// preemptHere stops attempt v of r's run, if it still runs.
func (r *round) preemptHere(v, msg string) {
	rs := r.rs
	slash, last := strings.IndexByte(v, '/'), strings.LastIndexByte(v, '/')
	if slash < 0 || last <= slash {
		return
	}
	i, ok := rs.plan.Index[v[slash+1:last]]
	n, err := strconv.Atoi(v[last+1:])
	if !ok || err != nil || !rs.active[i] || rs.nodes[i].attempt.Number != n {
		return
	}
	if rs.preemptedBy == nil {
		rs.preemptedBy = map[int]string{}
	}
	rs.preemptedBy[i] = msg
	r.stopAttempt(i, apiv1.CodePreempted)
}

// preemptedMessage is what a preempted attempt of node i records.
func (rs *runState) preemptedMessage(i int) string {
	msg := rs.preemptedBy[i]
	delete(rs.preemptedBy, i)
	if msg == "" {
		msg = "preempted"
	}
	return msg
}
