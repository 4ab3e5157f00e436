package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/client"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// TestScheduleApplyRefusesWhatCannotRun applies a schedule of 30
// February, one of every 100 ms and one whose params its workflow does
// not declare: apply refuses each, naming the field, and stores none.
func TestScheduleApplyRefusesWhatCannotRun(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	file := writeFile(t, t.TempDir(), "bad.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: feb}
spec:
  schedule: "0 0 30 2 *"
  workflow: {tasks: [{name: a, command: ["/bin/true"]}]}
---
apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: fast}
spec:
  schedule: "@every 100ms"
  workflow: {tasks: [{name: a, command: ["/bin/true"]}]}
---
apiVersion: kiln.dev/v1alpha1
kind: Schedule
metadata: {name: params}
spec:
  schedule: "@hourly"
  params: {epochs: "3"}
  workflow: {tasks: [{name: a, command: ["/bin/true"]}]}
`)
	r := kiln(t, home, "apply", "-f", file)
	for _, want := range []string{
		`KLN-1070 ` + file + `:5:3: Schedule/feb: spec.schedule: "0 0 30 2 *" never fires`,
		`KLN-1070 ` + file + `:12:3: Schedule/fast: spec.schedule: "@every 100ms": the interval 100ms is too short; the least is 1s`,
		`KLN-1014 ` + file + `:20:3: Schedule/params: spec.params: parameter "epochs" is not declared by its spec.workflow`,
	} {
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("kiln apply: %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	if r := kiln(t, home, "get", "schedules"); r.code != 0 || strings.Contains(r.stdout, "feb") {
		t.Errorf("a schedule that failed its checks was stored: %s %s", r.stdout, r.stderr)
	}
}

// TestScheduleThatNeverFiresStoredBefore stores a schedule of 30
// February as a kiln before the check did, beside one of every second:
// it lists with NEXT never, the server fires the other, and SIGTERM
// stops the server at once.
func TestScheduleThatNeverFiresStoredBefore(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	file := writeFile(t, t.TempDir(), "tick.yaml", everySecond)
	if r := kiln(t, home, "apply", "-f", file); r.code != 0 {
		t.Fatalf("kiln apply: %d %s", r.code, r.stderr)
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	feb := &apiv1.Schedule{Metadata: apiv1.ObjectMeta{Name: "feb"}, Spec: apiv1.ScheduleSpec{
		Schedule: "0 0 30 2 *", Workflow: &apiv1.WorkflowSpec{Tasks: []apiv1.Task{{Name: "a", Command: []string{"/bin/true"}}}},
	}}
	_, err = st.PutSchedule(t.Context(), store.PutScheduleParams{Project: "default", Schedule: feb, Now: time.Now().Add(-time.Hour)})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r := kiln(t, home, "get", "schedules"); r.code != 0 || !strings.Contains(r.stdout, "feb   0 0 30 2 *") || !strings.Contains(r.stdout, "never\n") {
		t.Errorf("kiln get schedules: want feb with NEXT never:\n%s%s", r.stdout, r.stderr)
	}
	base, admin, serve := startServe(t, home)
	c := client.New(base, admin)
	waitFor(t, "a run of the schedule of every second", func() bool { return len(scheduleRuns(t, c, "tick")) > 0 })
	env := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	if s := getSchedule(t, env, home, "feb"); !s.Status.Never || s.Status.NextScheduleTime != nil || s.Status.Code != apiv1.CodeCron {
		t.Errorf("status of feb: %+v; want never, no next tick, KLN-1070", s.Status)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = serve.Process.Kill()
		t.Fatal("kiln serve did not stop within 15 s of SIGTERM")
	}
}
