package schedule

import (
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func TestParseErrorSaysTheValueOnce(t *testing.T) {
	_, err := Parse(&apiv1.ScheduleSpec{Schedule: "61 * * * *"})
	msg := err.Error()
	if !strings.Contains(msg, `the minute field "61" is wrong: end of range (61) above maximum (59)`) || strings.Contains(msg, "(59): 61") {
		t.Errorf("error %q: want the field and the range, without the value repeated at the end", msg)
	}
}

func TestLoopOneTickMissedIsSingular(t *testing.T) {
	st, _, c, l := setup(t, apiv1.ScheduleSpec{StartingDeadlineSeconds: new(int64(1))}, created)
	pass(t, l, c, created.Add(2500*time.Millisecond)) // ticks 01 (missed) and 02
	if s := status(t, st); s.Missed != 1 || !strings.HasPrefix(s.Message, "1 tick missed, the latest") {
		t.Errorf("status %+v, want 1 tick missed", s)
	}
}

// TestStatusTimesAreUTC runs a schedule read in Europe/Paris: every time
// its status holds is written in UTC, as the rest of kiln's are.
func TestStatusTimesAreUTC(t *testing.T) {
	st := newStore(t)
	s := &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "s"}, Spec: apiv1.ScheduleSpec{
		Schedule: "* * * * * *", TimeZone: "Europe/Paris", Workflow: &apiv1.WorkflowSpec{},
		StartingDeadlineSeconds: new(int64(2)),
	}}
	if _, err := st.PutSchedule(t.Context(), store.PutScheduleParams{Project: "default", Schedule: s, Now: created}); err != nil {
		t.Fatal(err)
	}
	c := &clock{}
	l := New(Config{Store: st, Runner: newFakeRunner(), Now: c.Now, HistoryEvery: time.Hour})
	pass(t, l, c, created.Add(10*time.Second))
	got := status(t, st)
	for name, tm := range map[string]*time.Time{"lastTick": got.LastTick, "lastScheduleTime": got.LastScheduleTime, "createdAt": &got.CreatedAt} {
		if tm == nil || !strings.HasSuffix(tm.Format(time.RFC3339), "Z") {
			t.Errorf("%s: %v, want a time in UTC", name, tm)
		}
	}
}
