package schedule

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// fakeRunner keeps runs in memory: the engine's side of the loop, whose
// decisions are what these tests check.
type fakeRunner struct {
	mu        sync.Mutex
	runs      map[apiv1.RunID]*apiv1.Run
	order     []apiv1.RunID
	cancelled []apiv1.RunID
	deleted   []apiv1.RunID
}

func newFakeRunner() *fakeRunner { return &fakeRunner{runs: map[apiv1.RunID]*apiv1.Run{}} }

func (f *fakeRunner) Start(_ context.Context, s *apiv1.Schedule, tick time.Time) (apiv1.RunID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := RunID(s.Status.Project, s.Metadata.Name, tick)
	if f.runs[id] != nil {
		return id, fmt.Errorf("saving the run: %w", store.ErrConflict)
	}
	f.runs[id] = &apiv1.Run{ID: id, CreatedAt: tick, Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning}}
	f.order = append(f.order, id)
	return id, nil
}

func (f *fakeRunner) Runs(context.Context, *apiv1.Schedule) ([]*apiv1.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*apiv1.Run
	for _, id := range slices.Backward(f.order) {
		if r := f.runs[id]; r != nil {
			c := *r
			out = append(out, &c)
		}
	}
	return out, nil
}

func (f *fakeRunner) Cancel(_ context.Context, id apiv1.RunID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, id)
	f.runs[id].Status.Phase = apiv1.PhaseCancelled
	return nil
}

func (f *fakeRunner) Delete(_ context.Context, id apiv1.RunID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	delete(f.runs, id)
	return nil
}

func (f *fakeRunner) finish(phase apiv1.Phase) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.runs {
		if !r.Status.Phase.Done() {
			r.Status.Phase = phase
		}
	}
}

func (f *fakeRunner) started() []apiv1.RunID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order)
}

// clock is a settable time.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newStore(t *testing.T) store.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// setup stores a schedule of every second applied at created, and a loop
// on it.
func setup(t *testing.T, spec apiv1.ScheduleSpec, created time.Time) (store.Store, *fakeRunner, *clock, *Loop) {
	t.Helper()
	st := newStore(t)
	spec.Schedule = "* * * * * *"
	spec.Workflow = &apiv1.WorkflowSpec{}
	s := &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "s"}, Spec: spec}
	if _, err := st.PutSchedule(t.Context(), store.PutScheduleParams{Project: "default", Schedule: s, Now: created}); err != nil {
		t.Fatal(err)
	}
	r, c := newFakeRunner(), &clock{now: created}
	return st, r, c, New(Config{Store: st, Runner: r, Now: c.Now, HistoryEvery: time.Hour})
}

func pass(t *testing.T, l *Loop, c *clock, at time.Time) {
	t.Helper()
	c.now = at
	if _, err := l.Pass(t.Context()); err != nil {
		t.Fatalf("Pass at %s: %v", at, err)
	}
}

func status(t *testing.T, st store.Store) *apiv1.ScheduleStatus {
	t.Helper()
	s, err := st.Schedule(t.Context(), "default", "s")
	if err != nil {
		t.Fatal(err)
	}
	return s.Status
}

var created = time.Date(2026, 1, 5, 12, 0, 0, 500_000_000, time.UTC)

func TestLoopFiresEachTickOnceAcrossLoops(t *testing.T) {
	st, r, c, l := setup(t, apiv1.ScheduleSpec{StartingDeadlineSeconds: new(int64(60))}, created)
	pass(t, l, c, created.Add(3*time.Second))
	// Another leader, with the same store and engine, after a failover.
	other := New(Config{Store: st, Runner: r, Now: c.Now})
	pass(t, other, c, created.Add(3*time.Second))
	pass(t, other, c, created.Add(5*time.Second))
	pass(t, l, c, created.Add(5*time.Second))
	want := []apiv1.RunID{"s-1767614401", "s-1767614402", "s-1767614403", "s-1767614404", "s-1767614405"}
	if got := r.started(); !slices.Equal(got, want) {
		t.Errorf("started %v, want %v", got, want)
	}
	if s := status(t, st); s.LastRun != "s-1767614405" || s.LastScheduleTime == nil || s.LastScheduleTime.Unix() != 1767614405 || s.Missed != 0 {
		t.Errorf("status %+v", s)
	}
}

// TestLoopStatusLostAfterStart starts the runs of ticks whose status was
// never stored (the leader died between the two): the next pass finds
// them started, starts none twice, and goes on.
func TestLoopStatusLostAfterStart(t *testing.T) {
	st, r, c, l := setup(t, apiv1.ScheduleSpec{StartingDeadlineSeconds: new(int64(60))}, created)
	for _, tick := range []int64{1767614401, 1767614402} {
		if _, err := r.Start(t.Context(), &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "s"}, Status: &apiv1.ScheduleStatus{Project: "default"}}, time.Unix(tick, 0)); err != nil {
			t.Fatal(err)
		}
	}
	pass(t, l, c, created.Add(3*time.Second))
	if got := r.started(); len(got) != 3 || got[2] != "s-1767614403" {
		t.Errorf("started %v, want the two before and s-1767614403", got)
	}
	if s := status(t, st); s.LastTick == nil || s.LastTick.Unix() != 1767614403 {
		t.Errorf("status %+v", s)
	}
}

func TestLoopMissedTicksPastTheDeadline(t *testing.T) {
	st, r, c, l := setup(t, apiv1.ScheduleSpec{StartingDeadlineSeconds: new(int64(2))}, created)
	pass(t, l, c, created.Add(10*time.Second)) // down for 10 s
	if got := r.started(); len(got) != 2 || got[0] != "s-1767614409" {
		t.Errorf("started %v, want the 2 ticks within 2 s of 12:00:10.5", got)
	}
	s := status(t, st)
	if s.Missed != 8 || s.Code != apiv1.CodeTickMissed || !strings.Contains(s.Message, "8 ticks missed, the latest 2026-01-05T12:00:08Z") {
		t.Errorf("status %+v, want 8 ticks missed", s)
	}
}

func TestLoopSuspended(t *testing.T) {
	st, r, c, l := setup(t, apiv1.ScheduleSpec{Suspend: true, StartingDeadlineSeconds: new(int64(2))}, created)
	pass(t, l, c, created.Add(10*time.Second))
	if got := r.started(); len(got) != 0 {
		t.Errorf("a suspended schedule started %v", got)
	}
	s, _ := st.Schedule(t.Context(), "default", "s")
	s.Spec.Suspend = false
	if _, err := st.PutSchedule(t.Context(), store.PutScheduleParams{Project: "default", Schedule: s, Now: c.now}); err != nil {
		t.Fatal(err)
	}
	pass(t, l, c, created.Add(10*time.Second))
	if got := r.started(); len(got) != 2 {
		t.Errorf("resumed: started %v, want only the 2 ticks within startingDeadlineSeconds", got)
	}
}

func TestLoopForbid(t *testing.T) {
	st, r, c, l := setup(t, apiv1.ScheduleSpec{ConcurrencyPolicy: apiv1.ConcurrencyForbid, StartingDeadlineSeconds: new(int64(60))}, created)
	pass(t, l, c, created.Add(3*time.Second))
	if got := r.started(); len(got) != 1 {
		t.Fatalf("Forbid: started %v, want the first tick's run alone", got)
	}
	s := status(t, st)
	if s.Skipped != 2 || s.Code != apiv1.CodeTickSkipped || !strings.Contains(s.Message, "s-1767614401 of the schedule has not finished") {
		t.Errorf("status %+v, want 2 ticks skipped and why", s)
	}
	r.finish(apiv1.PhaseSucceeded)
	pass(t, l, c, created.Add(4*time.Second))
	if got := r.started(); len(got) != 2 || got[1] != "s-1767614404" {
		t.Errorf("after the run finished: started %v", got)
	}
}

func TestLoopReplace(t *testing.T) {
	_, r, c, l := setup(t, apiv1.ScheduleSpec{ConcurrencyPolicy: apiv1.ConcurrencyReplace, StartingDeadlineSeconds: new(int64(60))}, created)
	pass(t, l, c, created.Add(1*time.Second))
	pass(t, l, c, created.Add(2*time.Second))
	if !slices.Equal(r.cancelled, []apiv1.RunID{"s-1767614401"}) || len(r.started()) != 2 {
		t.Errorf("Replace: cancelled %v, started %v", r.cancelled, r.started())
	}
}

func TestLoopHistoryLimits(t *testing.T) {
	_, r, c, l := setup(t, apiv1.ScheduleSpec{SuccessfulRunsHistoryLimit: new(2), StartingDeadlineSeconds: new(int64(60))}, created)
	l.cfg.HistoryEvery = time.Nanosecond
	pass(t, l, c, created.Add(4*time.Second))
	r.finish(apiv1.PhaseSucceeded)
	pass(t, l, c, created.Add(5*time.Second)) // s-...405 starts, and is not finished
	if want := []apiv1.RunID{"s-1767614402", "s-1767614401"}; !slices.Equal(r.deleted, want) {
		t.Errorf("deleted %v, want %v: the succeeded runs beyond the newest 2", r.deleted, want)
	}
}

func TestOverHistory(t *testing.T) {
	runs := []*apiv1.Run{
		{ID: "r6", Status: apiv1.RunStatus{Phase: apiv1.PhaseRunning}},
		{ID: "r5", Status: apiv1.RunStatus{Phase: apiv1.PhaseFailed}},
		{ID: "r4", Status: apiv1.RunStatus{Phase: apiv1.PhaseSucceeded}},
		{ID: "r3", Status: apiv1.RunStatus{Phase: apiv1.PhaseCancelled}},
		{ID: "r2", Status: apiv1.RunStatus{Phase: apiv1.PhaseSucceeded}},
		{ID: "r1", Status: apiv1.RunStatus{Phase: apiv1.PhaseSucceeded}},
	}
	got := OverHistory(runs, &apiv1.ScheduleSpec{SuccessfulRunsHistoryLimit: new(2)})
	if want := []apiv1.RunID{"r3", "r1"}; !slices.Equal(got, want) {
		t.Errorf("OverHistory = %v, want %v (3 succeeded kept 2, 2 failed kept 1 by default)", got, want)
	}
}

// TestLoopCatchesUpInPassesOf100 finds 250 ticks due: each pass starts
// 100, oldest first, and asks for the next pass at once.
func TestLoopCatchesUpInPassesOf100(t *testing.T) {
	_, r, c, l := setup(t, apiv1.ScheduleSpec{StartingDeadlineSeconds: new(int64(1000))}, created)
	c.now = created.Add(250 * time.Second)
	for i, want := range []int{100, 200, 250} {
		wake, err := l.Pass(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if n := len(r.started()); n != want {
			t.Fatalf("pass %d: %d runs started, want %d", i+1, n, want)
		}
		if soon := wake.Sub(c.now) < 100*time.Millisecond; soon != (want < 250) {
			t.Errorf("pass %d: next pass in %s; want at once while catching up, else at the next tick", i+1, wake.Sub(c.now))
		}
	}
	if got := r.started(); got[0] != "s-1767614401" || got[249] != "s-1767614650" {
		t.Errorf("started %s..%s, want the 250 ticks oldest first", got[0], got[249])
	}
}
