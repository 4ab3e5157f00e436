package schedule

import (
	"context"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// within fails t if f does not return within d: the bugs these tests
// guard against spin forever.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %s", what, d)
	}
}

func cronErr(t *testing.T, expr string) *apiv1.Error {
	t.Helper()
	s := &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "s"}, Spec: apiv1.ScheduleSpec{
		Schedule: expr, WorkflowTemplateRef: &apiv1.TemplateRef{Name: "t"},
	}}
	for _, e := range apiv1.Errors(Check(s)) {
		if e.Field == "spec.schedule" {
			return e
		}
	}
	return nil
}

func TestCheckRefusesAnExpressionThatNeverFires(t *testing.T) {
	for _, expr := range []string{"0 0 30 2 *", "0 0 31 4 *", "0 0 0 31 11 *"} {
		e := cronErr(t, expr)
		if e == nil || e.Code != apiv1.CodeCron || !strings.Contains(e.Message, "never fires") {
			t.Errorf("%q: %v, want KLN-1070 never fires on spec.schedule", expr, e)
		}
	}
	for _, expr := range []string{"0 0 29 2 *", "0 0 31 * *"} {
		if e := cronErr(t, expr); e != nil {
			t.Errorf("%q fires (29 February comes every 4 years): %v", expr, e)
		}
	}
}

func TestCheckRefusesAnIntervalUnderASecond(t *testing.T) {
	for _, expr := range []string{"@every 0s", "@every 100ms", "@every 999ms"} {
		e := cronErr(t, expr)
		if e == nil || e.Code != apiv1.CodeCron || !strings.Contains(e.Message, "the least is 1s") {
			t.Errorf("%q: %v, want KLN-1070 saying the least is 1s", expr, e)
		}
	}
	for _, expr := range []string{"@every 1s", "@every 1m30s"} {
		if e := cronErr(t, expr); e != nil {
			t.Errorf("%q: %v", expr, e)
		}
	}
}

func TestDueOfAnExpressionThatNeverFires(t *testing.T) {
	c := mustParse(t, "0 0 30 2 *", "")
	if !c.Never(created) || !c.Next(created).IsZero() {
		t.Fatalf("30 February: Never %t, Next %s", c.Never(created), c.Next(created))
	}
	now := created.Add(30 * 24 * time.Hour)
	for _, d := range []*int64{nil, deadline(10)} {
		var p Plan
		within(t, 30*time.Second, "Due of 30 February", func() { p = c.Due(created, now, d) })
		if len(p.Fire) != 0 || p.Missed != 0 || !p.Last.IsZero() {
			t.Errorf("30 February (deadline %v): %+v, want nothing due", d, p)
		}
	}
	var latest time.Time
	within(t, 30*time.Second, "latestBefore of 30 February", func() { latest = c.latestBefore(now, time.Time{}) })
	if !latest.IsZero() {
		t.Errorf("latestBefore: %s, want none", latest)
	}
}

// TestLoopSkipsAStoredScheduleThatNeverFires stores, as an older kiln
// did, a schedule of 30 February beside one of every second: the loop
// fires the other, and stops at once when its context ends.
func TestLoopSkipsAStoredScheduleThatNeverFires(t *testing.T) {
	st := newStore(t)
	for name, expr := range map[string]string{"never": "0 0 30 2 *", "s": "* * * * * *"} {
		s := &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: name}, Spec: apiv1.ScheduleSpec{
			Schedule: expr, Workflow: &apiv1.WorkflowSpec{}, StartingDeadlineSeconds: new(int64(60)),
		}}
		if _, err := st.PutSchedule(t.Context(), store.PutScheduleParams{Project: "default", Schedule: s, Now: created}); err != nil {
			t.Fatal(err)
		}
	}
	r, c := newFakeRunner(), &clock{now: created.Add(3 * time.Second)}
	l := New(Config{Store: st, Runner: r, Now: c.Now, HistoryEvery: time.Hour})
	within(t, 30*time.Second, "a pass", func() {
		if _, err := l.Pass(t.Context()); err != nil {
			t.Errorf("Pass: %v", err)
		}
	})
	for _, id := range r.started() {
		if !strings.HasPrefix(string(id), "s-") {
			t.Errorf("started %s", id)
		}
	}
	if got := r.started(); len(got) != 3 {
		t.Errorf("started %v, want the 3 ticks of s", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() { defer close(ran); New(Config{Store: st, Runner: r}).Run(ctx) }()
	<-time.After(200 * time.Millisecond) // the loop is in its first pass or waiting for the next
	cancel()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not return within 5 s of its context's end")
	}
}
