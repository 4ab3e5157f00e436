package federation

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// callTimeout bounds one call to a party (and at most half the party
// timeout): a stopped server must not stall
// the attempt's other parties for long.
const callTimeout = 5 * time.Second

// keepEnded is how long an ended attempt's driver is kept for the engine
// to read; one asked about later asks the parties again.
const keepEnded = 10 * time.Minute

// driver drives one federated attempt: reserve every share, start them
// all, follow them to the end, and stop them all when asked or when one
// fails. Every wait is bounded by the federation's timeouts.
type driver struct {
	c       *Coordinator
	spec    *job.Spec
	fed     *job.Federated
	runID   apiv1.RunID
	parties map[string]Party
	down    map[string]time.Time // parties not answering, since when

	mu       sync.Mutex
	shares   []apiv1.PartyShare // one per fed.Shares, as last seen
	st       job.Status
	lines    []string
	stopped  chan struct{}
	stopWhy  string
	finished bool
	// following is set once every share was ordered to start: a party
	// that then says it has no part has lost its shares.
	following bool
}

func newDriver(c *Coordinator, spec *job.Spec) *driver {
	d := &driver{
		c: c, spec: spec, fed: spec.Federated, runID: apiv1.RunID(spec.ID.Run),
		parties: map[string]Party{}, down: map[string]time.Time{}, stopped: make(chan struct{}),
		st: job.Status{State: job.StateRunning, StartedAt: time.Now()},
	}
	for _, s := range d.fed.Shares {
		d.shares = append(d.shares, apiv1.PartyShare{Party: s.Party, Role: s.Role, Task: s.Name, Attempt: spec.ID.Number, State: apiv1.SharePending})
	}
	return d
}

// run drives the attempt and reports its end. A bug in driving it fails
// the attempt, never the server.
func (d *driver) run(ctx context.Context) {
	st := d.driveSafely(ctx)
	st.StartedAt = d.st.StartedAt
	st.FinishedAt = time.Now()
	d.settleShares()
	st.Report = d.report()
	d.mu.Lock()
	d.st, d.finished = st, true
	d.mu.Unlock()
	d.logf("attempt %d ended: %s", d.spec.ID.Number, outcome(st))
	d.c.ended(d.spec.ID, st)
	time.AfterFunc(keepEnded, func() { d.c.release(d.spec.ID) })
}

// driveSafely is drive, with a panic turned into the attempt's failure.
func (d *driver) driveSafely(ctx context.Context) (st job.Status) {
	defer func() {
		if p := recover(); p != nil {
			d.c.log.Error("federated attempt failed on a bug", "attempt", d.spec.ID, "panic", p, "stack", string(debug.Stack()))
			st = failed(apiv1.CodeStart, fmt.Sprintf("coordinating the attempt failed on a bug: %v", p), false)
		}
	}()
	return d.drive(ctx)
}

// drive is the attempt from its first reservation to its end.
func (d *driver) drive(ctx context.Context) job.Status {
	if st, ok := d.connect(ctx); !ok {
		return st
	}
	if !d.resume(ctx) {
		if st, ok := d.createParts(ctx); !ok {
			return st
		}
		if st, ok := d.reserve(ctx); !ok {
			return st
		}
		if st, ok := d.start(ctx); !ok {
			return st
		}
	}
	return d.follow(ctx)
}

// connect finds every party of the attempt.
func (d *driver) connect(ctx context.Context) (job.Status, bool) {
	for _, s := range d.fed.Shares {
		if d.parties[s.Party] != nil {
			continue
		}
		p, err := d.c.dir.Party(ctx, s.Party)
		if err != nil {
			return failed(apiv1.CodePartRefused, fmt.Sprintf("party %s: %v", s.Party, err), true), false
		}
		d.parties[s.Party] = p
	}
	return job.Status{}, true
}

// resume asks the parties where the attempt stands, for an initiator that
// restarted: it reports started once any share was ordered to start.
func (d *driver) resume(ctx context.Context) (started bool) {
	for party, ps := range d.statuses(ctx) {
		for k, s := range d.fed.Shares {
			sh, has := ps.Shares[s.Name]
			if s.Party != party || !has || sh.Attempt != d.spec.ID.Number {
				continue
			}
			if sh.State != apiv1.SharePending && sh.State != apiv1.ShareReserving && sh.State != apiv1.ShareReleased {
				started = true
			}
			d.see(k, sh)
		}
	}
	if started {
		d.logf("resuming attempt %d: its shares were started before", d.spec.ID.Number)
	}
	return started
}

// createParts has every party create its part of the run (idempotent).
func (d *driver) createParts(ctx context.Context) (job.Status, bool) {
	run, err := d.c.runs.GetRun(ctx, d.runID)
	if err != nil {
		return failed(apiv1.CodeStart, "reading the federated run: "+err.Error(), false), false
	}
	if run.Federation == nil {
		return failed(apiv1.CodePartRefused, fmt.Sprintf("run %s records no federation: it was not submitted as a federated run", d.runID), true), false
	}
	req := apiv1.PartRequest{Run: d.runID, Initiator: run.Federation.Initiator, Workflow: run.Workflow, Params: run.Params}
	if run.RerunOf != nil {
		req.RerunOf, req.Preset = run.RerunOf.Run, presetTasks(run)
	}
	pending := d.partyNames()
	for len(pending) > 0 {
		var left []string
		for _, party := range pending {
			start, cctx, cancel := d.call(ctx)
			_, err := d.parties[party].CreatePart(cctx, req)
			cancel()
			if err == nil {
				d.heard(party)
			} else if !IsRefusal(err) {
				d.lost(party, err, start)
			}
			if st, stop := d.answered(party, err, apiv1.CodePartRefused, "refused to create its part"); stop {
				d.releaseAll(ctx, "the attempt failed before it started")
				return st, false
			}
			if err != nil {
				left = append(left, party)
			}
		}
		if pending = left; len(pending) > 0 && !d.wait(ctx) {
			return d.stoppedStatus(ctx, false), false
		}
	}
	return job.Status{}, true
}

// reserve has every share admitted and held at its party, all or none,
// within the admission timeout.
func (d *driver) reserve(ctx context.Context) (job.Status, bool) {
	deadline := time.Now().Add(d.fed.AdmissionTimeout)
	d.logf("asking %s to admit their shares of %s (attempt %d), all or none, within %s",
		strings.Join(d.partyNames(), ", "), d.fed.Task, d.spec.ID.Number, d.fed.AdmissionTimeout)
	for {
		for k, s := range d.fed.Shares {
			if d.share(k).State == apiv1.ShareReserved {
				continue
			}
			sh, err := d.order(ctx, k, apiv1.ShareOrder{Attempt: d.spec.ID.Number, Action: apiv1.OrderReserve})
			if st, stop := d.answered(s.Party, err, apiv1.CodePartRefused, "refused the reservation"); stop {
				d.releaseAll(ctx, "the attempt failed before it started")
				return st, false
			}
			if err == nil && sh.State == apiv1.ShareFailed {
				d.releaseAll(ctx, "another party cannot admit its share")
				code := apiv1.CodeShareNeverFits
				if sh.Code == apiv1.CodeQuotaWait { // the party's quota, not its pool
					code = sh.Code
				}
				return failed(code, fmt.Sprintf("party %s cannot admit its share (%s as %s): %s", s.Party, s.Name, s.Role, sh.Message), true), false
			}
		}
		if d.allReserved() {
			d.logf("every share is admitted and held; starting them")
			return job.Status{}, true
		}
		if time.Now().After(deadline) {
			k := d.firstNotReserved()
			s, sh := d.fed.Shares[k], d.share(k)
			d.releaseAll(ctx, "not every party admitted its share in time")
			return failed(apiv1.CodeFederatedAdmission, fmt.Sprintf("party %s did not admit its share (%s as %s) within the admission timeout of %s: %s; every share held was given back",
				s.Party, s.Name, s.Role, d.fed.AdmissionTimeout, orNothing(sh.Message)), false), false
		}
		if !d.wait(ctx) {
			return d.stoppedStatus(ctx, false), false
		}
	}
}

// start orders every reserved share started, with where its peers meet.
func (d *driver) start(ctx context.Context) (job.Status, bool) {
	peers := d.peers()
	left := map[int]bool{}
	for k := range d.fed.Shares {
		left[k] = true
	}
	for len(left) > 0 {
		for k := range left {
			s := d.fed.Shares[k]
			_, err := d.order(ctx, k, apiv1.ShareOrder{Attempt: d.spec.ID.Number, Action: apiv1.OrderStart, Peers: peers})
			if st, stop := d.answered(s.Party, err, apiv1.CodePartRefused, "refused to start its share"); stop {
				d.abortAll(ctx, "the attempt failed at another party")
				return st, false
			}
			if err == nil {
				delete(left, k)
			}
		}
		if len(left) > 0 && !d.wait(ctx) {
			return d.stoppedStatus(ctx, true), false
		}
	}
	return job.Status{}, true
}

// follow reads the shares' states until every one succeeded, one failed,
// a party stayed unreachable too long, or the attempt is stopped.
func (d *driver) follow(ctx context.Context) job.Status {
	since, delay := time.Now(), d.c.Poll/32 // short tasks end soon: look again soon, then every poll
	d.mu.Lock()
	d.following = true
	d.mu.Unlock()
	for {
		for party, ps := range d.statuses(ctx) {
			for k, s := range d.fed.Shares {
				if sh, ok := ps.Shares[s.Name]; ok && s.Party == party && sh.Attempt == d.spec.ID.Number {
					d.see(k, sh)
				}
			}
		}
		if k, bad := d.firstFailed(); bad {
			s, sh := d.fed.Shares[k], d.share(k)
			d.abortAll(ctx, fmt.Sprintf("the share of party %s failed", s.Party))
			st := failed(apiv1.CodeShareFailed, fmt.Sprintf("the share of party %s (%s as %s) failed: %s", s.Party, s.Name, s.Role, codeMessage(sh)), false)
			return st
		}
		if d.allSucceeded() {
			return job.Status{State: job.StateExited}
		}
		if k, late := d.notStarted(since); late {
			s := d.fed.Shares[k]
			d.abortAll(ctx, fmt.Sprintf("the share of party %s did not start", s.Party))
			return failed(apiv1.CodeFederatedAdmission, fmt.Sprintf("party %s did not start its share (%s as %s) within the admission timeout of %s after it was ordered to: %s",
				s.Party, s.Name, s.Role, d.fed.AdmissionTimeout, orNothing(d.share(k).Message)), false)
		}
		if st, late := d.unreachable(); late {
			d.abortAll(ctx, "a party was unreachable for too long")
			return st
		}
		if delay = min(2*delay, d.c.Poll); !d.waitFor(ctx, delay) {
			return d.stoppedStatus(ctx, true)
		}
	}
}

// statuses asks every party for its part, in parallel; a party that does
// not answer is left out and shown Unreachable.
func (d *driver) statuses(ctx context.Context) map[string]apiv1.PartStatus {
	out := map[string]apiv1.PartStatus{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, party := range d.partyNames() {
		wg.Go(func() {
			start, cctx, cancel := d.call(ctx)
			defer cancel()
			ps, err := d.parties[party].PartStatus(cctx, d.runID)
			if err != nil && IsRefusal(err) {
				d.refused(party, err)
				return
			}
			if err != nil {
				d.lost(party, err, start)
				return
			}
			d.heard(party)
			mu.Lock()
			out[party] = ps
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// order sends o to share k's party and records its answer.
func (d *driver) order(ctx context.Context, k int, o apiv1.ShareOrder) (apiv1.ShareStatus, error) {
	s := d.fed.Shares[k]
	start, cctx, cancel := d.call(ctx)
	defer cancel()
	sh, err := d.parties[s.Party].OrderShare(cctx, d.runID, s.Name, o)
	if err != nil {
		if !IsRefusal(err) {
			d.lost(s.Party, err, start)
		}
		return sh, err
	}
	d.heard(s.Party)
	sh.Attempt = o.Attempt
	d.see(k, sh)
	return sh, nil
}

// answered judges a party's answer: a refusal ends the attempt (stop),
// so does silence past the party timeout; a network error is retried.
func (d *driver) answered(party string, err error, code apiv1.Code, what string) (job.Status, bool) {
	var coded *apiv1.Error
	if IsRefusal(err) && errors.As(err, &coded) {
		return failed(code, fmt.Sprintf("party %s %s: %s %s", party, what, coded.Code, coded.Message), true), true
	}
	if st, late := d.unreachable(); late {
		return st, true
	}
	return job.Status{}, false
}

// unreachable reports a party silent for longer than the party timeout.
func (d *driver) unreachable() (job.Status, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, party := range d.partyNamesLocked() {
		if at, ok := d.down[party]; ok && time.Since(at) > d.fed.PartyTimeout {
			since := time.Since(at)
			return failed(apiv1.CodePartyLost, fmt.Sprintf("party %s could not be reached for %s (partyTimeout %s)",
				party, since.Round(100*time.Millisecond), d.fed.PartyTimeout), false), true
		}
	}
	return job.Status{}, false
}

// refused records that party refused to say how its part stands (it
// has none): while the attempt runs, its shares are lost.
func (d *driver) refused(party string, err error) {
	d.heard(party)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.following {
		return
	}
	for k := range d.shares {
		if d.shares[k].Party == party && !finalShare(d.shares[k].State) {
			d.lines = append(d.lines, stamp(fmt.Sprintf("party %s: %v", party, err)))
			d.shares[k].State, d.shares[k].Message = apiv1.ShareFailed, err.Error()
		}
	}
}

// call is the start of one call to a party and its bounded context.
func (d *driver) call(ctx context.Context) (time.Time, context.Context, context.CancelFunc) {
	limit := min(callTimeout, max(d.fed.PartyTimeout/2, time.Second))
	cctx, cancel := context.WithTimeout(ctx, limit)
	return time.Now(), cctx, cancel
}

// heard records that party answered.
func (d *driver) heard(party string) {
	d.mu.Lock()
	delete(d.down, party)
	d.mu.Unlock()
}

// lost marks party's shares Unreachable after err.
func (d *driver) lost(party string, err error, since time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.down[party]; !ok {
		d.down[party] = since
	}
	for k := range d.shares {
		if d.shares[k].Party == party && !finalShare(d.shares[k].State) {
			if d.shares[k].State != apiv1.ShareUnreachable {
				d.lines = append(d.lines, stamp(fmt.Sprintf("party %s unreachable: %v", party, err)))
			}
			d.shares[k].State, d.shares[k].Message = apiv1.ShareUnreachable, err.Error()
		}
	}
}

// see records share k as its party reported it.
func (d *driver) see(k int, sh apiv1.ShareStatus) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	p := &d.shares[k]
	if p.State != sh.State {
		d.lines = append(d.lines, stamp(fmt.Sprintf("party %s, %s as %s: %s %s", p.Party, p.Task, p.Role, sh.State, sh.Message)))
	}
	p.State, p.Code, p.Message, p.SeenAt = sh.State, sh.Code, sh.Message, &now
	if sh.Address != "" {
		p.Address = sh.Address
	}
	if sh.Attempt > 0 {
		p.Attempt = sh.Attempt
	}
}

// wait sleeps one poll; false if the attempt was stopped meanwhile.
func (d *driver) wait(ctx context.Context) bool { return d.waitFor(ctx, d.c.Poll) }

// waitFor sleeps delay; false if the attempt was stopped meanwhile.
func (d *driver) waitFor(ctx context.Context, delay time.Duration) bool {
	return sleep(ctx, delay, d.stopped)
}

// sleep sleeps delay; false if ctx ended or stop closed first (a nil
// stop never does).
func sleep(ctx context.Context, delay time.Duration, stop <-chan struct{}) bool {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-stop:
		return false
	case <-ctx.Done():
		return false
	}
}

// stop asks the driver to stop the attempt everywhere.
func (d *driver) stop(why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopWhy == "" {
		d.stopWhy = why
		close(d.stopped)
	}
}

// stoppedStatus stops every share (given back if it never started) and
// returns the status of an attempt the engine stopped.
func (d *driver) stoppedStatus(ctx context.Context, started bool) job.Status {
	d.mu.Lock()
	why := d.stopWhy
	d.mu.Unlock()
	if why == "" {
		why = "the initiator's engine stopped"
	}
	if started {
		d.abortAll(context.WithoutCancel(ctx), why)
	} else {
		d.releaseAll(context.WithoutCancel(ctx), why)
	}
	return job.Status{State: job.StateExited, ExitCode: -1, Stopped: true, Message: why}
}
