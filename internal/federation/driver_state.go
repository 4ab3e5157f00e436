package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/job"
)

// giveUp bounds how long a driver keeps sending release or abort orders
// to a party that does not answer; once the run ends, its initiator asks
// every party to end its part, for up to an hour.
const giveUp = 30 * time.Second

// releaseAll gives back every share's reservation.
func (d *driver) releaseAll(ctx context.Context, why string) {
	d.everywhere(ctx, apiv1.OrderRelease, why)
}

// abortAll stops every share that may have started.
func (d *driver) abortAll(ctx context.Context, why string) {
	d.everywhere(ctx, apiv1.OrderAbort, why)
}

// everywhere sends action to every share once, and again, in the
// background for up to giveUp, to a party that did not answer: the
// attempt's end is reported at once.
func (d *driver) everywhere(ctx context.Context, action, why string) {
	d.logf("%s every share: %s", action, why)
	var left []int
	for k := range d.fed.Shares {
		if finalShare(d.share(k).State) && action != apiv1.OrderRelease {
			continue
		}
		if !d.tell(ctx, k, action, why) {
			left = append(left, k)
		}
	}
	if len(left) > 0 {
		go d.keepTelling(context.WithoutCancel(ctx), left, action, why)
	}
}

// tell sends action to share k and reports whether the party took it
// (or refused it for good). A share that took it and had not ended is
// shown Released: the party stops it or gives its room back.
func (d *driver) tell(ctx context.Context, k int, action, why string) bool {
	_, err := d.order(ctx, k, apiv1.ShareOrder{Attempt: d.spec.ID.Number, Action: action, Reason: why})
	if err == nil {
		d.mu.Lock()
		if p := &d.shares[k]; !finalShare(p.State) {
			if action == apiv1.OrderAbort && p.State == apiv1.ShareRunning {
				p.State, p.Message = apiv1.ShareStopped, "stopped: "+why
			} else {
				p.State, p.Message = apiv1.ShareReleased, "given back: "+why
			}
		}
		d.mu.Unlock()
	}
	return err == nil || IsRefusal(err)
}

// keepTelling sends action to the shares left until their parties take
// it, for up to giveUp.
func (d *driver) keepTelling(ctx context.Context, left []int, action, why string) {
	for until := time.Now().Add(giveUp); len(left) > 0 && time.Now().Before(until); {
		if !sleep(ctx, d.c.Poll, nil) { // not on the attempt's stop: orders after a stop are what this sends
			return
		}
		left = slices.DeleteFunc(left, func(k int) bool { return d.tell(ctx, k, action, why) })
	}
	for _, k := range left {
		d.logf("party %s did not take the %s order within %s; the run's end stops its share when it answers again", d.fed.Shares[k].Party, action, giveUp)
	}
}

// peers lists every share of the attempt and where it meets the others.
func (d *driver) peers() []apiv1.Peer {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]apiv1.Peer, len(d.shares))
	for k, s := range d.shares {
		out[k] = apiv1.Peer{Party: s.Party, Role: s.Role, Task: s.Task, Address: s.Address}
	}
	return out
}

// share returns share k as last seen.
func (d *driver) share(k int) apiv1.PartyShare {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.shares[k]
}

func (d *driver) allReserved() bool { return d.firstNotReserved() < 0 }

// firstNotReserved is the first share not yet held, or -1.
func (d *driver) firstNotReserved() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.IndexFunc(d.shares, func(s apiv1.PartyShare) bool { return s.State != apiv1.ShareReserved })
}

// firstFailed is the first share whose attempt failed or was given back.
func (d *driver) firstFailed() (int, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := slices.IndexFunc(d.shares, func(s apiv1.PartyShare) bool {
		return s.State == apiv1.ShareFailed || s.State == apiv1.ShareReleased
	})
	return k, k >= 0
}

func (d *driver) allSucceeded() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !slices.ContainsFunc(d.shares, func(s apiv1.PartyShare) bool { return s.State != apiv1.ShareSucceeded })
}

// partyNames lists the attempt's parties, in the order of its shares.
func (d *driver) partyNames() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.partyNamesLocked()
}

func (d *driver) partyNamesLocked() []string {
	var out []string
	for _, s := range d.fed.Shares {
		if !slices.Contains(out, s.Party) {
			out = append(out, s.Party)
		}
	}
	return out
}

// status is the attempt as the engine sees it.
func (d *driver) status() job.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st
}

func (d *driver) done() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.finished
}

// report is the shares as JSON.
func (d *driver) report() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, _ := json.Marshal(d.shares)
	return b
}

// journal is what the driver did, one line each.
func (d *driver) journal() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.lines, "")
}

func (d *driver) logf(format string, args ...any) {
	d.mu.Lock()
	d.lines = append(d.lines, stamp(fmt.Sprintf(format, args...)))
	d.mu.Unlock()
}

func stamp(s string) string { return time.Now().UTC().Format(time.RFC3339) + " " + s + "\n" }

// failed is the status of a federated attempt that failed with code.
func failed(code apiv1.Code, msg string, permanent bool) job.Status {
	return job.Status{State: job.StateExited, ExitCode: -1, Code: string(code), Message: msg, Permanent: permanent}
}

// finalShare reports whether a share state is an end.
func finalShare(state string) bool {
	return state == apiv1.ShareSucceeded || state == apiv1.ShareFailed || state == apiv1.ShareReleased || state == apiv1.ShareStopped
}

// settleShares shows the shares that never got going as never started,
// once the attempt ended: none of them will.
func (d *driver) settleShares() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range d.shares {
		switch d.shares[k].State {
		case apiv1.SharePending, apiv1.ShareReserving, apiv1.ShareReserved:
			d.shares[k].State, d.shares[k].Message = apiv1.ShareReleased, "never started: the attempt ended first"
		}
	}
}

func outcome(st job.Status) string {
	switch {
	case st.Stopped:
		return "stopped: " + st.Message
	case st.ExitCode == 0:
		return "every share succeeded"
	}
	return st.Code + " " + st.Message
}

func codeMessage(s apiv1.PartyShare) string {
	if s.Code != "" {
		return string(s.Code) + " " + s.Message
	}
	return orNothing(s.Message)
}

func orNothing(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// IsRefusal reports whether err is a party's refusal: a coded answer,
// but not one that says the party could not answer now (a replica whose
// leader is not reached, a server busy or rate limited), which is retried
// as silence is.
func IsRefusal(err error) bool {
	var coded *apiv1.Error
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code {
	case apiv1.CodePartyUnreachable, apiv1.CodeBusy, apiv1.CodeRateLimited, apiv1.CodeStoreBusy:
		return false
	}
	return true
}

// notStarted is the first share still waiting to start (Reserved) longer
// than the admission timeout after the start order.
func (d *driver) notStarted(since time.Time) (int, bool) {
	if time.Since(since) <= d.fed.AdmissionTimeout {
		return 0, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := slices.IndexFunc(d.shares, func(s apiv1.PartyShare) bool {
		return s.State == apiv1.ShareReserved || s.State == apiv1.ShareReserving || s.State == apiv1.SharePending
	})
	return k, k >= 0
}

// presetTasks are the tasks a rerun does not run: reused (Succeeded) or
// left out (Skipped without an attempt).
func presetTasks(run *apiv1.Run) map[string]apiv1.Phase {
	out := map[string]apiv1.Phase{}
	for _, n := range run.Status.Nodes {
		switch {
		case n.Reused != nil:
			out[n.Name] = apiv1.PhaseSucceeded
		case n.Phase == apiv1.PhaseSkipped && len(n.Attempts) == 0 && n.Parent == "":
			out[n.Name] = apiv1.PhaseSkipped
		}
	}
	return out
}
