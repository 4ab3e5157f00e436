package schedule

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// MaxCatchUp is the most ticks one pass fires for one schedule; the
// next pass, at once, goes on from the last.
const MaxCatchUp = 100

// Grace is how late a tick may start when the schedule sets no
// startingDeadlineSeconds: the loop's own delay, so that no tick is lost
// in the ordinary run of things. Older missed ticks follow the CronJob
// rule: only the latest starts.
const Grace = 5 * time.Second

// maxCount bounds the missed ticks counted one by one; past it they are
// counted as that many.
const maxCount = 10000

// Plan is what is due of a schedule at a moment.
type Plan struct {
	// Fire are the ticks to start runs for, oldest first.
	Fire []time.Time
	// Missed counts the ticks too late to start (at least, when
	// MissedAtLeast), the latest of them LastMissed.
	Missed        int64
	MissedAtLeast bool
	LastMissed    time.Time
	// Last is the latest tick the plan deals with: the schedule's next
	// pass starts after it. Zero when nothing is due.
	Last time.Time
}

// Due works out what is due at now of the ticks after since, given the
// schedule's startingDeadlineSeconds (nil: unset). Ticks older than the
// deadline are missed; with no deadline, ticks older than Grace are
// missed but the latest of them, when no younger one is due, as a
// CronJob does. At most MaxCatchUp ticks fire. Its times are in UTC.
func (c *Cron) Due(since, now time.Time, deadline *int64) Plan {
	window := Grace
	if deadline != nil {
		window = time.Duration(*deadline) * time.Second
	}
	var p Plan
	from := since
	if start := now.Add(-window); start.After(since) {
		p.Missed, p.MissedAtLeast, p.LastMissed = c.count(since, start)
		from = start.Add(-time.Nanosecond)
	}
	for t := c.Next(from); !t.IsZero() && !t.After(now) && len(p.Fire) < MaxCatchUp; t = c.Next(t) {
		p.Fire = append(p.Fire, t)
	}
	if deadline == nil && len(p.Fire) == 0 && p.Missed > 0 {
		p.Fire, p.Missed = []time.Time{p.LastMissed}, p.Missed-1
	}
	p.Last = p.LastMissed
	if n := len(p.Fire); n > 0 && p.Fire[n-1].After(p.Last) {
		p.Last = p.Fire[n-1]
	}
	return p.utc()
}

// utc gives the plan's times in UTC, as the schedule's status writes
// every time: the expression's zone only says which instants match.
func (p Plan) utc() Plan {
	for i := range p.Fire {
		p.Fire[i] = p.Fire[i].UTC()
	}
	if !p.LastMissed.IsZero() {
		p.LastMissed = p.LastMissed.UTC()
	}
	if !p.Last.IsZero() {
		p.Last = p.Last.UTC()
	}
	return p
}

// count counts the ticks after since and before end, and finds the
// latest; past maxCount it stops counting and finds the latest alone.
func (c *Cron) count(since, end time.Time) (n int64, atLeast bool, latest time.Time) {
	for t := c.Next(since); !t.IsZero() && t.Before(end); t = c.Next(t) {
		if n == maxCount {
			return n, true, c.latestBefore(end, since)
		}
		n, latest = n+1, t
	}
	return n, false, latest
}

// latestBefore finds the latest tick before end and after since, looking
// back over windows that double until one holds a tick. It gives up,
// returning the zero time, once the window would pass the longest
// Duration; each window is counted to maxCount ticks at most.
func (c *Cron) latestBefore(end, since time.Time) time.Time {
	for back := time.Second; back > 0; back *= 2 {
		from := end.Add(-back)
		if !from.After(since) {
			from = since
		}
		var latest time.Time
		n := 0
		for t := c.Next(from); !t.IsZero() && t.Before(end) && n <= maxCount; t = c.Next(t) {
			latest, n = t, n+1
		}
		if !latest.IsZero() || from.Equal(since) {
			return latest
		}
	}
	return time.Time{}
}

// RunID is the ID of the run a schedule starts for a tick: the
// schedule's name and the tick in Unix seconds, so that each tick has
// one run. A schedule of another project than "default" gets a hash of
// its project and name in it too, and a long name is shortened to fit
// the 63 characters of a DNS label.
func RunID(project, name string, tick time.Time) apiv1.RunID {
	unix := strconv.FormatInt(tick.Unix(), 10)
	base := name
	if project != "" && project != "default" {
		base = name + "-" + hash(project, name)
	}
	if len(base)+1+len(unix) > 63 {
		keep := 63 - 1 - len(unix) - 1 - 8
		base = trimDash(name[:min(keep, len(name))]) + "-" + hash(project, name)
	}
	return apiv1.RunID(base + "-" + unix)
}

func hash(project, name string) string {
	sum := sha256.Sum256([]byte(project + "/" + name))
	return hex.EncodeToString(sum[:])[:8]
}

func trimDash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '-' {
		s = s[:len(s)-1]
	}
	return s
}

// Decision is what a due tick does, given the schedule's unfinished runs.
type Decision struct {
	// Start says whether the tick starts its run.
	Start bool
	// Cancel are the runs to cancel first (Replace).
	Cancel []apiv1.RunID
	// Reason says why the tick starts no run.
	Reason string
}

// Decide applies a concurrency policy to the unfinished runs of a
// schedule (active) at a tick.
func Decide(policy string, active []apiv1.RunID, tick time.Time) Decision {
	if len(active) == 0 {
		return Decision{Start: true}
	}
	switch policy {
	case apiv1.ConcurrencyForbid:
		return Decision{Reason: fmt.Sprintf("tick %s skipped: run %s of the schedule has not finished and concurrencyPolicy is Forbid",
			tick.UTC().Format(time.RFC3339), active[0])}
	case apiv1.ConcurrencyReplace:
		return Decision{Start: true, Cancel: active}
	}
	return Decision{Start: true}
}
