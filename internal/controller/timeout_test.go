package controller

import (
	"testing"
	"time"
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
