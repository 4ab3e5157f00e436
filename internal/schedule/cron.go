// Package schedule fires Schedules: it reads their cron expressions in
// their time zones, works out which ticks are due, missed or skipped, and
// runs the loop that starts one run per tick on the leader.
//
// Exactly once: each tick's run has an ID made of the schedule and the
// tick (RunID), so a tick fired already, by this engine or by a leader
// before a failover, is refused by the store as a conflict; and the
// latest tick dealt with is stored with the schedule, so a tick is
// never looked at again once its run is gone.
package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones read the same on a machine without zoneinfo

	"github.com/robfig/cron/v3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Cron is a parsed cron expression in its time zone.
type Cron struct {
	sched cron.Schedule
	loc   *time.Location
}

// fields are the parser's options: an optional seconds field first, the
// five of a crontab, and descriptors (@hourly, @every 1m).
const fields = cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor

// Parse reads a schedule's expression in its time zone. Its errors are
// coded (KLN-1070, KLN-1071) and name the field; the caller adds the
// file and object.
func Parse(spec *apiv1.ScheduleSpec) (*Cron, error) {
	loc, zerr := time.LoadLocation(spec.Zone())
	if zerr != nil || spec.TimeZone == "Local" {
		loc, zerr = time.UTC, &apiv1.Error{
			Code: apiv1.CodeTimeZone, Field: "spec.timeZone",
			Message: fmt.Sprintf("%q is not an IANA time zone kiln knows", spec.TimeZone),
		}
	}
	s, err := parseExpr(strings.TrimSpace(spec.Schedule))
	if err := errors.Join(zerr, err); err != nil {
		return nil, err
	}
	if spec, ok := s.(*cron.SpecSchedule); ok {
		spec.Location = loc
	}
	return &Cron{sched: s, loc: loc}, nil
}

// Never reports whether the expression matches no time in the five years
// after t (30 February, 31 April): robfig/cron looks no further, and its
// Next then returns the zero time.
func (c *Cron) Never(t time.Time) bool { return c.Next(t).IsZero() }

// MinEvery is the shortest interval an @every descriptor may give.
const MinEvery = time.Second

// checkEvery refuses an @every interval under MinEvery, which robfig/cron
// would round up to a second without a word.
func checkEvery(expr string) error {
	rest, ok := strings.CutPrefix(expr, "@every ")
	if !ok {
		return nil
	}
	// A duration that does not parse robfig/cron refused already.
	if d, err := time.ParseDuration(strings.TrimSpace(rest)); err == nil && d < MinEvery {
		return &apiv1.Error{
			Code: apiv1.CodeCron, Field: "spec.schedule",
			Message: fmt.Sprintf("%q: the interval %s is too short; the least is %s", expr, d, MinEvery),
			Hint:    "use @every 1s or longer",
		}
	}
	return nil
}

// parseExpr reads a cron expression; its errors name spec.schedule.
func parseExpr(expr string) (cron.Schedule, error) {
	if expr == "" {
		return nil, &apiv1.Error{Code: apiv1.CodeRequired, Field: "spec.schedule", Message: "a Schedule needs a cron expression"}
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, &apiv1.Error{
			Code: apiv1.CodeCron, Field: "spec.schedule",
			Message: fmt.Sprintf("%q names its time zone in the expression", expr), Hint: "set spec.timeZone instead",
		}
	}
	s, err := cron.NewParser(fields).Parse(expr)
	if err != nil {
		return nil, &apiv1.Error{Code: apiv1.CodeCron, Field: "spec.schedule", Message: fmt.Sprintf("%q: %s", expr, explain(expr, err))}
	}
	if err := checkEvery(expr); err != nil {
		return nil, err
	}
	return s, nil
}

// explain says which field of expr is wrong, when one is.
func explain(expr string, err error) string {
	parts := strings.Fields(expr)
	names := []string{"minute", "hour", "day-of-month", "month", "day-of-week"}
	if len(parts) == 6 {
		names = append([]string{"second"}, names...)
	}
	if len(parts) != len(names) || strings.HasPrefix(expr, "@") {
		return err.Error()
	}
	for i, part := range parts {
		probe := make([]string, len(parts))
		for j := range probe {
			probe[j] = "*"
		}
		probe[i] = part
		if _, perr := cron.NewParser(fields).Parse(strings.Join(probe, " ")); perr != nil {
			return fmt.Sprintf("the %s field %q is wrong: %s", names[i], part, strings.TrimSuffix(perr.Error(), ": "+part))
		}
	}
	return err.Error()
}

// Next returns the first tick after t, or the zero time when there is
// none in the five years after t (see Never).
func (c *Cron) Next(t time.Time) time.Time { return c.sched.Next(t.In(c.loc)) }

// Location is the time zone the expression is read in.
func (c *Cron) Location() *time.Location { return c.loc }
