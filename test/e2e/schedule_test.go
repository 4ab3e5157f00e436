package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
)

// everySecond is a Schedule that runs a one-task workflow every second,
// catches up ticks up to 30 s late, and keeps every run it starts.
const everySecond = `apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata:
  name: tick
spec:
  schedule: "* * * * * *"
  startingDeadlineSeconds: 30
  successfulRunsHistoryLimit: 1000
  failedRunsHistoryLimit: 1000
  workflow:
    tasks:
      - name: hello
        command: ["/bin/true"]
`

// TestScheduleFiresEachTickOnceAcrossRestart applies a schedule of every
// second to kiln serve through the API, kills the server with SIGKILL
// after a few ticks, starts it again a few seconds later, and checks that
// every tick from the schedule's first to the last one before the check
// started exactly one run: the restarted server caught up the ticks it
// missed while it was down (they are within startingDeadlineSeconds).
func TestScheduleFiresEachTickOnceAcrossRestart(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, serve := startServe(t, home)
	env := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	file := writeFile(t, t.TempDir(), "tick.yaml", everySecond)
	if r := kilnWithEnv(t, env, home, "apply", "-f", file); r.code != 0 || !strings.Contains(r.stdout, "Schedule/tick created in project default") {
		t.Fatalf("kiln apply: %d %s %s", r.code, r.stdout, r.stderr)
	}
	created := getSchedule(t, env, home, "tick").Status.CreatedAt
	from := created.Truncate(time.Second).Add(time.Second) // the first tick after it was created

	<-time.After(4 * time.Second)
	if err := serve.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = serve.Wait()
	<-time.After(4 * time.Second) // ticks missed while no server runs
	restarted := time.Now()
	base, admin, _ = startServe(t, home)
	env = append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	<-time.After(5 * time.Second)

	to := time.Now().Add(-2 * time.Second).Truncate(time.Second)
	c := client.New(base, admin)
	var got []*apiv1.Run
	waitFor(t, "the runs of every tick up to "+to.Format(time.RFC3339), func() bool {
		got = scheduleRuns(t, c, "tick")
		return len(got) > 0 && tickOf(t, got[0]) >= to.Unix()
	})
	checkTicks(t, got, from, to)
	caughtUp := 0
	for _, r := range got {
		if tick := time.Unix(tickOf(t, r), 0); tick.Before(restarted) && tick.After(restarted.Add(-3*time.Second)) && !r.CreatedAt.Before(restarted) {
			caughtUp++
		}
	}
	if caughtUp == 0 {
		t.Errorf("no run of a tick of the server's downtime was started by the restarted server")
	}
	s := getSchedule(t, env, home, "tick")
	if s.Status.Missed != 0 || s.Status.LastRun == "" || s.Status.LastScheduleTime == nil || s.Status.NextScheduleTime == nil {
		t.Errorf("status after the restart: %+v; want no tick missed, the last run and the next tick", s.Status)
	}
	r := kilnWithEnv(t, env, home, "get", "schedules")
	if r.code != 0 || !strings.Contains(r.stdout, "LAST SCHEDULE") || !strings.Contains(r.stdout, "tick  * * * * * *  UTC") {
		t.Errorf("kiln get schedules: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "delete", "schedule", "tick"); r.code != 0 {
		t.Fatalf("kiln delete schedule: %s", r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "get", "schedule", "tick"); r.code == 0 || !strings.Contains(r.stderr, "KLN-3094") {
		t.Errorf("kiln get schedule after delete: %d %s", r.code, r.stderr)
	}
}

// TestScheduleErrorsNameTheField applies a Schedule with a bad cron
// expression, time zone and template, embedded, and reads each error.
func TestScheduleErrorsNameTheField(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	file := writeFile(t, t.TempDir(), "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata:
  name: bad
spec:
  schedule: "0 25 * * *"
  timeZone: Europe/Atlantis
  workflowTemplateRef: {name: nope}
`)
	r := kiln(t, home, "apply", "-f", file)
	for _, want := range []string{
		`KLN-1070 ` + file + `:6:3: Schedule/bad: spec.schedule: "0 25 * * *": the hour field "25" is wrong`,
		`KLN-1071 ` + file + `:7:3: Schedule/bad: spec.timeZone: "Europe/Atlantis"`,
		`KLN-1073 ` + file + `:8:25: Schedule/bad: spec.workflowTemplateRef.name: project "default" has no WorkflowTemplate "nope"`,
	} {
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("kiln apply of a bad schedule: %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	if r := kiln(t, home, "get", "schedules"); r.code != 0 || strings.Contains(r.stdout, "bad") {
		t.Errorf("a schedule that failed its checks was stored: %s %s", r.stdout, r.stderr)
	}
	// The example applies, its template with it, and is listed.
	if r := kiln(t, home, "apply", "-f", "../../examples/schedules/nightly.yaml"); r.code != 0 || !strings.Contains(r.stdout, "Schedule/nightly created") {
		t.Fatalf("kiln apply of the example: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = kiln(t, home, "get", "schedules")
	if r.code != 0 || !strings.Contains(r.stdout, "nightly  0 2 * * *  Europe/Paris  false    0       -              in ") {
		t.Errorf("kiln get schedules:\n%s%s", r.stdout, r.stderr)
	}
	if r := kiln(t, home, "suspend", "schedule", "nightly"); r.code != 0 || !strings.Contains(r.stdout, "next tick: none while suspended") {
		t.Errorf("kiln suspend schedule: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := kiln(t, home, "get", "schedules"); !strings.Contains(r.stdout, "Europe/Paris  true     0       -              -") {
		t.Errorf("kiln get schedules of a suspended schedule:\n%s%s", r.stdout, r.stderr)
	}
	if r := kiln(t, home, "unsuspend", "schedule", "nightly"); r.code != 0 || strings.Contains(r.stdout, "none while suspended") {
		t.Errorf("kiln unsuspend schedule: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if s := getSchedule(t, nil, home, "nightly"); s.Spec.Suspend || s.Spec.WorkflowTemplateRef == nil || s.Spec.Params["epochs"] != "3" {
		t.Errorf("after suspend and unsuspend: %+v; want the spec as applied", s.Spec)
	}
}

func getSchedule(t *testing.T, env []string, home, name string) *apiv1.Schedule {
	t.Helper()
	r := kilnWithEnv(t, env, home, "get", "schedule", name, "-o", "json")
	if r.code != 0 {
		t.Fatalf("kiln get schedule %s: %s", name, r.stderr)
	}
	var s apiv1.Schedule
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || s.Status == nil {
		t.Fatalf("kiln get schedule -o json: %v\n%s", err, r.stdout)
	}
	return &s
}

// scheduleRuns lists the runs schedule name started, newest first.
func scheduleRuns(t *testing.T, c *client.Client, name string) []*apiv1.Run {
	t.Helper()
	page, err := c.ListRuns(t.Context(), apiv1.RunQuery{Label: apiv1.LabelSchedule + "=" + name, Limit: 500})
	if err != nil {
		t.Fatalf("listing the runs of schedule %s: %v", name, err)
	}
	return page.Items
}

// tickOf is the tick a schedule's run was started for, in Unix seconds.
func tickOf(t *testing.T, r *apiv1.Run) int64 {
	t.Helper()
	tick, err := strconv.ParseInt(r.Labels[apiv1.LabelScheduledTime], 10, 64)
	if err != nil {
		t.Fatalf("run %s: label %s: %v", r.ID, apiv1.LabelScheduledTime, err)
	}
	return tick
}

// checkTicks checks that the runs of a schedule of every second hold
// exactly one run for each tick from from to to, both included: none
// missing, none twice. Runs of ticks outside are not looked at.
func checkTicks(t *testing.T, runs []*apiv1.Run, from, to time.Time) {
	t.Helper()
	count := map[int64][]apiv1.RunID{}
	for _, r := range runs {
		count[tickOf(t, r)] = append(count[tickOf(t, r)], r.ID)
	}
	var missing []string
	for tick := from.Unix(); tick <= to.Unix(); tick++ {
		switch ids := count[tick]; {
		case len(ids) == 0:
			missing = append(missing, time.Unix(tick, 0).UTC().Format(time.TimeOnly))
		case len(ids) > 1:
			t.Errorf("tick %s fired %d runs: %v", time.Unix(tick, 0).UTC().Format(time.TimeOnly), len(ids), ids)
		}
	}
	if len(missing) > 0 {
		ticks := make([]int64, 0, len(count))
		for tick := range count {
			ticks = append(ticks, tick)
		}
		slices.Sort(ticks)
		t.Errorf("ticks %s..%s: %d fired no run: %v (ticks with runs: %v)", from.UTC().Format(time.TimeOnly), to.UTC().Format(time.TimeOnly), len(missing), missing, ticks)
	}
}

// TestScheduleHistoryLimits runs a schedule of every second that keeps 2
// succeeded runs, and waits for the leader to delete the older ones, with
// their directories, through the collector's deletion.
func TestScheduleHistoryLimits(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	env := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	doc := strings.Replace(everySecond, "successfulRunsHistoryLimit: 1000", "successfulRunsHistoryLimit: 2", 1)
	doc = strings.Replace(doc, "name: tick", "name: keep", 1)
	if r := kilnWithEnv(t, env, home, "apply", "-f", writeFile(t, t.TempDir(), "tick.yaml", doc)); r.code != 0 {
		t.Fatalf("kiln apply: %s", r.stderr)
	}
	c := client.New(base, admin)
	var first apiv1.RunID
	waitFor(t, "the schedule's first run", func() bool {
		got := scheduleRuns(t, c, "keep")
		if len(got) > 0 {
			first = got[len(got)-1].ID
		}
		return first != ""
	})
	waitFor(t, "the runs beyond the history limit to be deleted", func() bool {
		got := scheduleRuns(t, c, "keep")
		return len(got) > 0 && len(got) <= 3 && got[len(got)-1].ID != first
	})
	if _, err := c.GetRun(t.Context(), first); err == nil {
		t.Errorf("run %s, beyond the history limit, is still there", first)
	}
	// The collector deletes a run's records, then its directory: wait for
	// the second, which comes a moment after the first.
	waitFor(t, "the directory of deleted run "+string(first)+" to go", func() bool {
		_, err := os.Stat(filepath.Join(home, "runs", string(first)))
		return os.IsNotExist(err)
	})
	succeeded := 0
	for _, r := range scheduleRuns(t, c, "keep") {
		if r.Status.Phase == apiv1.PhaseSucceeded {
			succeeded++
		}
	}
	if succeeded > 2+1 { // a run may have finished since the last prune
		t.Errorf("%d succeeded runs kept, want at most 2 (and one finished since)", succeeded)
	}
}
