package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func mustParse(t *testing.T, expr, zone string) *Cron {
	t.Helper()
	c, err := Parse(&apiv1.ScheduleSpec{Schedule: expr, TimeZone: zone})
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", expr, zone, err)
	}
	return c
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func ticks(c *Cron, from time.Time, n int) []string {
	var out []string
	for t := from; len(out) < n; {
		t = c.Next(t)
		out = append(out, t.UTC().Format(time.RFC3339))
	}
	return out
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		expr, zone string
		code       apiv1.Code
		field      string
		says       string
	}{
		{"* * *", "", apiv1.CodeCron, "spec.schedule", "expected 5 to 6 fields"},
		{"70 * * * *", "", apiv1.CodeCron, "spec.schedule", `the minute field "70" is wrong`},
		{"0 0 32 * *", "", apiv1.CodeCron, "spec.schedule", `the day-of-month field "32"`},
		{"61 0 0 * * *", "", apiv1.CodeCron, "spec.schedule", `the second field "61"`},
		{"@fortnightly", "", apiv1.CodeCron, "spec.schedule", "unrecognized descriptor"},
		{"CRON_TZ=UTC 0 * * * *", "", apiv1.CodeCron, "spec.schedule", "spec.timeZone"},
		{"", "", apiv1.CodeRequired, "spec.schedule", "needs a cron expression"},
		{"0 * * * *", "Mars/Olympus", apiv1.CodeTimeZone, "spec.timeZone", `"Mars/Olympus"`},
	}
	for _, tc := range cases {
		_, err := Parse(&apiv1.ScheduleSpec{Schedule: tc.expr, TimeZone: tc.zone})
		var e *apiv1.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Field != tc.field || !strings.Contains(e.Error(), tc.says) {
			t.Errorf("Parse(%q, %q) = %v, want %s on %s saying %q", tc.expr, tc.zone, err, tc.code, tc.field, tc.says)
		}
	}
}

func TestNextSecondsAndDescriptors(t *testing.T) {
	from := at(t, "2026-01-05T12:00:01Z")
	cases := []struct {
		expr string
		want []string
	}{
		{"*/5 * * * * *", []string{"2026-01-05T12:00:05Z", "2026-01-05T12:00:10Z"}},
		{"*/15 * * * *", []string{"2026-01-05T12:15:00Z", "2026-01-05T12:30:00Z"}},
		{"@hourly", []string{"2026-01-05T13:00:00Z", "2026-01-05T14:00:00Z"}},
		{"@every 90s", []string{"2026-01-05T12:01:31Z", "2026-01-05T12:03:01Z"}},
	}
	for _, tc := range cases {
		if got := ticks(mustParse(t, tc.expr, ""), from, 2); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s from %s: %v, want %v", tc.expr, from, got, tc.want)
		}
	}
}

func TestTimeZone(t *testing.T) {
	c := mustParse(t, "0 9 * * *", "Europe/Paris")
	got := ticks(c, at(t, "2026-01-05T00:00:00Z"), 1)[0]
	if got != "2026-01-05T08:00:00Z" {
		t.Errorf("9:00 in Paris in winter = %s UTC, want 08:00", got)
	}
	if got := ticks(c, at(t, "2026-07-05T00:00:00Z"), 1)[0]; got != "2026-07-05T07:00:00Z" {
		t.Errorf("9:00 in Paris in summer = %s UTC, want 07:00", got)
	}
}

// TestDST pins what a change of clocks does, as robfig/cron (and a
// Kubernetes CronJob) does it: a time the spring change skips does not
// fire that day; a time the autumn change repeats fires twice, an hour
// apart. Each is a tick of its own (its own run ID).
func TestDST(t *testing.T) {
	spring := mustParse(t, "30 2 * * *", "America/New_York")
	got := ticks(spring, at(t, "2026-03-07T12:00:00Z"), 2)
	if want := []string{"2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("02:30 across the spring change: %v, want %v (March 8 has no 02:30)", got, want)
	}
	autumn := mustParse(t, "30 1 * * *", "America/New_York")
	got = ticks(autumn, at(t, "2026-10-31T12:00:00Z"), 3)
	if want := []string{"2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-02T06:30:00Z"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("01:30 across the autumn change: %v, want %v", got, want)
	}
	hourly := mustParse(t, "0 * * * *", "America/New_York")
	prev := at(t, "2026-11-01T03:30:00Z")
	for range 5 {
		next := hourly.Next(prev)
		if d := next.Sub(prev); prev.Minute() == 0 && d != time.Hour {
			t.Errorf("hourly across the autumn change: %s then %s", prev.UTC(), next.UTC())
		}
		prev = next
	}
}

func deadline(s int64) *int64 { return &s }

func TestDueWithDeadline(t *testing.T) {
	c := mustParse(t, "* * * * * *", "")
	since := at(t, "2026-01-05T12:00:00Z")
	now := since.Add(60*time.Second + 500*time.Millisecond)
	p := c.Due(since, now, deadline(10))
	if len(p.Fire) != 10 || !p.Fire[0].Equal(since.Add(51*time.Second)) || !p.Last.Equal(since.Add(60*time.Second)) {
		t.Fatalf("fire %v (last %s), want the 10 ticks 12:00:51..12:01:00", p.Fire, p.Last)
	}
	if p.Missed != 50 || p.MissedAtLeast || !p.LastMissed.Equal(since.Add(50*time.Second)) {
		t.Errorf("missed %d (at least %t, latest %s), want 50, the latest 12:00:50", p.Missed, p.MissedAtLeast, p.LastMissed)
	}
	// Nothing due: nothing to do.
	if p := c.Due(now, now.Add(300*time.Millisecond), deadline(10)); len(p.Fire) != 0 || !p.Last.IsZero() {
		t.Errorf("nothing due: %+v", p)
	}
}

func TestDueWithoutDeadlineFiresTheLatestMissed(t *testing.T) {
	c := mustParse(t, "*/1 * * * *", "")
	since := at(t, "2026-01-05T10:00:00Z")
	p := c.Due(since, at(t, "2026-01-05T11:00:30Z"), nil)
	if len(p.Fire) != 1 || !p.Fire[0].Equal(at(t, "2026-01-05T11:00:00Z")) || p.Missed != 59 {
		t.Errorf("down an hour, no deadline: fire %v, missed %d; want 11:00 alone, 59 missed", p.Fire, p.Missed)
	}
	// A tick a little late (within Grace) still fires, with the one before it.
	every := mustParse(t, "* * * * * *", "")
	p = every.Due(since, since.Add(2*time.Second+100*time.Millisecond), nil)
	if len(p.Fire) != 2 || p.Missed != 0 {
		t.Errorf("two ticks due within Grace: fire %v, missed %d", p.Fire, p.Missed)
	}
}

func TestDueIsBounded(t *testing.T) {
	c := mustParse(t, "* * * * * *", "")
	now := at(t, "2026-01-05T12:00:00Z")
	p := c.Due(now.Add(-500*time.Second), now, deadline(1000))
	if len(p.Fire) != MaxCatchUp || !p.Last.Equal(p.Fire[MaxCatchUp-1]) || !p.Fire[0].Equal(now.Add(-499*time.Second)) {
		t.Errorf("500 ticks due: fired %d from %s, last %s; want the oldest %d", len(p.Fire), p.Fire[0], p.Last, MaxCatchUp)
	}
	// Down 30 days on a schedule of every second: counting stops, the
	// latest missed tick is still found.
	p = c.Due(now.Add(-30*24*time.Hour), now, deadline(10))
	if !p.MissedAtLeast || p.Missed != maxCount || !p.LastMissed.Equal(now.Add(-11*time.Second)) || len(p.Fire) != 11 {
		t.Errorf("30 days down: missed %d (at least %t, latest %s), fire %d", p.Missed, p.MissedAtLeast, p.LastMissed, len(p.Fire))
	}
}

func TestDecide(t *testing.T) {
	tick := at(t, "2026-01-05T12:00:00Z")
	active := []apiv1.RunID{"nightly-1767614340"}
	if d := Decide(apiv1.ConcurrencyForbid, nil, tick); !d.Start {
		t.Errorf("Forbid with no run active: %+v", d)
	}
	if d := Decide(apiv1.ConcurrencyForbid, active, tick); d.Start || !strings.Contains(d.Reason, "nightly-1767614340") || !strings.Contains(d.Reason, "Forbid") {
		t.Errorf("Forbid with a run active: %+v", d)
	}
	if d := Decide(apiv1.ConcurrencyReplace, active, tick); !d.Start || len(d.Cancel) != 1 || d.Cancel[0] != active[0] {
		t.Errorf("Replace with a run active: %+v", d)
	}
	if d := Decide(apiv1.ConcurrencyAllow, active, tick); !d.Start || len(d.Cancel) != 0 {
		t.Errorf("Allow with a run active: %+v", d)
	}
}

func TestRunID(t *testing.T) {
	tick := time.Unix(1767614400, 0)
	if got := RunID("default", "nightly", tick); got != "nightly-1767614400" {
		t.Errorf("RunID = %s", got)
	}
	other := RunID("team-a", "nightly", tick)
	if other == "nightly-1767614400" || !strings.HasSuffix(string(other), "-1767614400") {
		t.Errorf("another project's schedule of the same name: %s", other)
	}
	long := strings.Repeat("a", 60) + "-b"
	ids := map[apiv1.RunID]bool{}
	for _, id := range []apiv1.RunID{RunID("default", long, tick), RunID("default", long, tick.Add(time.Second)), RunID("default", long[:59]+"-c", tick), other} {
		if msgs := validation.IsDNS1123Label(string(id)); len(msgs) > 0 {
			t.Errorf("%s is not a DNS label: %v", id, msgs)
		}
		if ids[id] {
			t.Errorf("%s given twice", id)
		}
		ids[id] = true
	}
}

func TestCheck(t *testing.T) {
	neg := int64(-1)
	s := &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "Bad_Name"}, Spec: apiv1.ScheduleSpec{
		Schedule: "0 * * * *", ConcurrencyPolicy: "Sometimes", StartingDeadlineSeconds: &neg,
	}}
	err := Check(s)
	want := map[string]apiv1.Code{
		"metadata.name": apiv1.CodeInvalidName, "spec.concurrencyPolicy": apiv1.CodeInvalidValue,
		"spec.startingDeadlineSeconds": apiv1.CodeOutOfRange, "spec": apiv1.CodeScheduleTarget,
	}
	got := map[string]apiv1.Code{}
	for _, e := range apiv1.Errors(err) {
		got[e.Field] = e.Code
	}
	for f, c := range want {
		if got[f] != c {
			t.Errorf("field %s: %s, want %s (all: %v)", f, got[f], c, err)
		}
	}
	s = &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "ok"}, Spec: apiv1.ScheduleSpec{
		Schedule: "0 * * * *", WorkflowTemplateRef: &apiv1.TemplateRef{Name: "t"},
	}}
	if err := Check(s); err != nil {
		t.Errorf("a valid schedule: %v", err)
	}
}
