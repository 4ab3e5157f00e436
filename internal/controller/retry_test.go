package controller

import (
	"strings"
	"testing"
	"time"

	"kiln.dev/kiln/internal/workflow"
)

func TestNextRetry(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	twice := workflow.Retry{Limit: 2, Backoff: 5 * time.Second, Factor: 2}
	cases := map[string]struct {
		f        failure
		spent    budget
		retry    workflow.Retry
		stopping bool
		want     bool
		wantAt   time.Time
		wantNote string
	}{
		"a first failure waits out the backoff":           {retry: twice, want: true, wantAt: now.Add(5 * time.Second), wantNote: "retry 1 of 2"},
		"the backoff grows with the task's failures":      {spent: budget{user: 1}, retry: twice, want: true, wantAt: now.Add(10 * time.Second), wantNote: "retry 2 of 2"},
		"system failures do not grow the backoff":         {spent: budget{system: 2}, retry: twice, want: true, wantAt: now.Add(5 * time.Second)},
		"the task's retries run out":                      {spent: budget{user: 2}, retry: twice},
		"no retries, no retry":                            {},
		"a permanent failure is never retried":            {f: failure{permanent: true}, retry: twice},
		"nothing is retried once the run stops":           {retry: twice, stopping: true},
		"a system failure is retried at once":             {f: failure{system: true}, want: true, wantAt: now, wantNote: "1 of 3 used"},
		"a system failure spends none of the retries":     {f: failure{system: true}, spent: budget{user: 2}, retry: twice, want: true, wantAt: now},
		"the system budget runs out":                      {f: failure{system: true}, spent: budget{system: 3}, retry: twice, wantNote: "all 3 system retries are used up"},
		"a permanent system failure is still not retried": {f: failure{system: true, permanent: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := nextRetry(tc.f, tc.spent, tc.retry, 3, tc.stopping, 4, now)
			if got.retry != tc.want || (tc.want && !got.at.Equal(tc.wantAt)) {
				t.Errorf("nextRetry = %+v, want retry %v at %s", got, tc.want, tc.wantAt)
			}
			if !strings.Contains(got.note, tc.wantNote) {
				t.Errorf("note %q does not say %q", got.note, tc.wantNote)
			}
		})
	}
}

func TestBudgetSpend(t *testing.T) {
	t.Parallel()
	b := budget{}.spend(failure{}).spend(failure{system: true}).spend(failure{system: true})
	if b != (budget{user: 1, system: 2}) {
		t.Errorf("spent %+v, want one of the task's retries and two system retries", b)
	}
}
