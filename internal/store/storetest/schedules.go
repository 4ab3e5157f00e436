package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// newSchedule is a Schedule named name running template tmpl on expr.
func newSchedule(name, expr, tmpl string) *apiv1.Schedule {
	deadline := int64(30)
	return &apiv1.Schedule{
		TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindSchedule},
		Metadata: apiv1.ObjectMeta{Name: name, Labels: map[string]string{"team": "ml"}},
		Spec: apiv1.ScheduleSpec{
			Schedule: expr, TimeZone: "Europe/Paris", StartingDeadlineSeconds: &deadline,
			WorkflowTemplateRef: &apiv1.TemplateRef{Name: tmpl}, Params: map[string]string{"n": "2"},
		},
	}
}

func testSchedules(t *testing.T, s store.Store) {
	ctx := t.Context()
	put := func(project string, sc *apiv1.Schedule, now time.Time) *apiv1.Schedule {
		t.Helper()
		got, err := s.PutSchedule(ctx, store.PutScheduleParams{Project: project, Schedule: sc, Now: now})
		if err != nil {
			t.Fatalf("PutSchedule(%s, %s): %v", project, sc.Metadata.Name, err)
		}
		return got
	}
	put("a", newSchedule("nightly", "0 2 * * *", "train"), t0)
	put("a", newSchedule("hourly", "@hourly", "eval"), t0)
	put("b", newSchedule("nightly", "0 3 * * *", "other"), t0)

	tick := t0.Add(time.Minute)
	st := &apiv1.ScheduleStatus{LastTick: &tick, LastScheduleTime: &tick, LastRun: "nightly-1", Missed: 2, Message: "m", Code: apiv1.CodeTickMissed}
	if ok, err := s.SetScheduleStatus(ctx, "a", "nightly", st); !ok || err != nil {
		t.Fatalf("SetScheduleStatus = %t, %v", ok, err)
	}
	replaced := put("a", newSchedule("nightly", "0 4 * * *", "train"), t0.Add(time.Hour))
	want := newSchedule("nightly", "0 4 * * *", "train")
	want.Status = &apiv1.ScheduleStatus{
		Project: "a", CreatedAt: t0, UpdatedAt: t0.Add(time.Hour),
		LastTick: &tick, LastScheduleTime: &tick, LastRun: "nightly-1", Missed: 2, Message: "m", Code: apiv1.CodeTickMissed,
	}
	if diff := cmp.Diff(want, replaced); diff != "" {
		t.Errorf("PutSchedule replacing keeps the status (-want +got):\n%s", diff)
	}
	got, err := s.Schedule(ctx, "a", "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Schedule(a, nightly) (-want +got):\n%s", diff)
	}
	if got, err := s.Schedule(ctx, "b", "nightly"); err != nil || got.Spec.Schedule != "0 3 * * *" || got.Status.LastTick != nil || got.Status.Project != "b" {
		t.Errorf("Schedule(b, nightly) = %+v, %v; projects keep their own", got, err)
	}
	if _, err := s.Schedule(ctx, "c", "nightly"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Schedule of another project = %v, want ErrNotFound", err)
	}
	testScheduleStatusOrder(t, s, tick)
	testScheduleLists(t, s)
}

// testScheduleStatusOrder checks that a status never goes back to an
// earlier tick, as a stale leader's would.
func testScheduleStatusOrder(t *testing.T, s store.Store, tick time.Time) {
	ctx := t.Context()
	earlier := tick.Add(-time.Second)
	if ok, err := s.SetScheduleStatus(ctx, "a", "nightly", &apiv1.ScheduleStatus{LastTick: &earlier, LastRun: "stale"}); ok || err != nil {
		t.Errorf("SetScheduleStatus of an earlier tick = %t, %v; want refused", ok, err)
	}
	later := tick.Add(time.Second)
	if ok, err := s.SetScheduleStatus(ctx, "a", "nightly", &apiv1.ScheduleStatus{LastTick: &later, LastRun: "next", Skipped: 1}); !ok || err != nil {
		t.Errorf("SetScheduleStatus of a later tick = %t, %v", ok, err)
	}
	if got, _ := s.Schedule(ctx, "a", "nightly"); got == nil || got.Status.LastRun != "next" || !got.Status.LastTick.Equal(later) || got.Status.Skipped != 1 {
		t.Errorf("after the later status: %+v", got)
	}
	if _, err := s.SetScheduleStatus(ctx, "a", "gone", &apiv1.ScheduleStatus{LastTick: &later}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetScheduleStatus of an unknown schedule = %v, want ErrNotFound", err)
	}
}

func testScheduleLists(t *testing.T, s store.Store) {
	ctx := t.Context()
	names := func(list []*apiv1.Schedule) []string {
		var out []string
		for _, sc := range list {
			out = append(out, sc.Status.Project+"/"+sc.Metadata.Name)
		}
		return out
	}
	a, err := s.ListSchedules(ctx, "a")
	if diff := cmp.Diff([]string{"a/hourly", "a/nightly"}, names(a)); err != nil || diff != "" {
		t.Errorf("ListSchedules(a): %v (-want +got):\n%s", err, diff)
	}
	all, err := s.ListSchedules(ctx, "")
	if diff := cmp.Diff([]string{"a/hourly", "a/nightly", "b/nightly"}, names(all)); err != nil || diff != "" {
		t.Errorf("ListSchedules of every project: %v (-want +got):\n%s", err, diff)
	}
	if err := s.DeleteSchedule(ctx, "a", "nightly"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSchedule(ctx, "a", "nightly"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteSchedule twice = %v, want ErrNotFound", err)
	}
	if _, err := s.Schedule(ctx, "b", "nightly"); err != nil {
		t.Errorf("deleting a/nightly took b/nightly: %v", err)
	}
	if empty, err := s.ListSchedules(ctx, "c"); err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("ListSchedules of a project without any = %v, %v; want an empty list", empty, err)
	}
}
