package controller

import (
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/workflow"
)

func TestDeadlines(t *testing.T) {
	t.Parallel()

	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		start   time.Time
		limit   time.Duration
		now     time.Time
		want    time.Time
		expired bool
	}{
		"no limit never expires":          {start: t0, now: t0.Add(time.Hour)},
		"not begun never expires":         {limit: time.Second, now: t0},
		"within the limit":                {start: t0, limit: time.Minute, now: t0.Add(59 * time.Second), want: t0.Add(time.Minute)},
		"at the limit it has expired":     {start: t0, limit: time.Minute, now: t0.Add(time.Minute), want: t0.Add(time.Minute), expired: true},
		"past the limit it has expired":   {start: t0, limit: time.Minute, now: t0.Add(time.Hour), want: t0.Add(time.Minute), expired: true},
		"a negative limit means no limit": {start: t0, limit: -time.Second, now: t0.Add(time.Hour)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := deadline(tc.start, tc.limit)
			if !d.Equal(tc.want) {
				t.Errorf("deadline = %s, want %s", d, tc.want)
			}
			if got := expired(d, tc.now); got != tc.expired {
				t.Errorf("expired = %v, want %v", got, tc.expired)
			}
		})
	}
	if !startOf(nil).IsZero() || !startOf(&t0).Equal(t0) {
		t.Error("startOf must read a time behind a pointer, zero for nil")
	}
}

// TestAttemptTimeoutCountsFromTheLaunch: a task's timeout counts from
// when its processes had started, not from when the engine decided to
// start them; a launch of an older attempt, or one recorded before the
// decision, changes nothing.
func TestAttemptTimeoutCountsFromTheLaunch(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		launch *launched
		want   time.Time
	}{
		"not launched yet: from the decision": {want: t0.Add(time.Second)},
		"a slow launch: from its end":         {launch: &launched{2, t0.Add(700 * time.Millisecond)}, want: t0.Add(1700 * time.Millisecond)},
		"the previous attempt's launch":       {launch: &launched{1, t0.Add(700 * time.Millisecond)}, want: t0.Add(time.Second)},
		"a launch before the record":          {launch: &launched{2, t0.Add(-time.Second)}, want: t0.Add(time.Second)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rs := &runState{
				nodes: []*nodeState{{attempt: apiv1.AttemptStatus{Number: 2, StartedAt: &t0}}},
				plan:  &workflow.Plan{Tasks: []workflow.Task{{Timeout: time.Second}}},
			}
			if tc.launch != nil {
				rs.nodes[0].launched.Store(tc.launch)
			}
			if got := rs.attemptDeadline(0); !got.Equal(tc.want) {
				t.Errorf("deadline = %s, want %s", got.Sub(t0), tc.want.Sub(t0))
			}
		})
	}
}
