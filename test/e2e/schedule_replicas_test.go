package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store/pgtest"
)

// scheduleSeconds is how long TestScheduleAcrossFailovers lets its
// schedule run: a minute, as the issue asks, or KILN_SCHEDULE_SECONDS.
func scheduleSeconds() time.Duration {
	if n, err := strconv.Atoi(os.Getenv("KILN_SCHEDULE_SECONDS")); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return time.Minute
}

// TestScheduleAcrossFailovers runs a schedule of every second on three
// replicas of one PostgreSQL, kills the leader with SIGKILL twice, and
// checks that every tick from the schedule's first to the last before the
// check started exactly one run: the ticks of each takeover were caught
// up by the new leader, and none was fired by two leaders.
func TestScheduleAcrossFailovers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t).NewDatabase(t)
	rs := startReplicas(t, dsn, 3, replicaOptions{})
	_, term := rs.leader(t, 0)
	doc := strings.Replace(everySecond, "startingDeadlineSeconds: 30", "startingDeadlineSeconds: 60", 1)
	if _, err := rs.any(1).Apply(t.Context(), apiv1.TemplateApply{Files: []apiv1.SourceFile{{Name: "tick.yaml", Data: []byte(doc)}}}); err != nil {
		t.Fatalf("applying the schedule to a replica: %v", err)
	}
	s, err := rs.any(2).GetSchedule(t.Context(), "default", "tick")
	if err != nil {
		t.Fatal(err)
	}
	from := s.Status.CreatedAt.Truncate(time.Second).Add(time.Second)
	period := scheduleSeconds()
	for k := range 2 {
		pause(t, period/3)
		lead, _ := rs.leader(t, 0)
		killed := time.Now()
		lead.kill9()
		_, term = rs.leader(t, term)
		t.Logf("failover %d: term %d took over in %s", k+1, term, time.Since(killed).Round(time.Millisecond))
		rs.start(t, lead)
	}
	pause(t, period/3)

	to := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	var got []*apiv1.Run
	waitFor(t, "the runs of every tick up to "+to.Format(time.RFC3339), func() bool {
		got = scheduleRuns(t, rs.any(0), "tick")
		return len(got) > 0 && tickOf(t, got[0]) >= to.Unix()
	})
	checkTicks(t, got, from, to)
	t.Logf("%d ticks from %s to %s, each one run, across 2 failovers", to.Unix()-from.Unix()+1, from.Format(time.TimeOnly), to.Format(time.TimeOnly))
	if s, err := rs.any(0).GetSchedule(t.Context(), "default", "tick"); err != nil || s.Status.Missed != 0 {
		t.Errorf("status after the failovers: %+v, %v; want no tick missed", s, err)
	}
}
