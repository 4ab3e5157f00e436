package local

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// TestALaunchMakesOnlyWhatItNeeds launches a task's first attempt into a
// fresh run, then its second: the first makes the task's directory, its
// own and its outputs', the second only its own two, and neither leaves
// anything else behind: a log and its time index for a stream written
// to, nothing for a silent one.
func TestALaunchMakesOnlyWhatItNeeds(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	run := filepath.Join(h.home, "runs", "r-fresh")
	want := []string{"_attempts.jsonl", "t/", "t/1/", "t/1/outputs/"}
	if st := h.waitExit(t, h.launch(t, "r-fresh/t/1", "true")); !st.Succeeded() {
		t.Fatalf("the first attempt ended %+v, want success", st)
	}
	if got := tree(t, run); !slices.Equal(got, want) {
		t.Errorf("after the first attempt the run holds %q, want %q", got, want)
	}
	if st := h.waitExit(t, h.launch(t, "r-fresh/t/2", "sh", "-c", "echo out")); !st.Succeeded() {
		t.Fatalf("the second attempt ended %+v, want success", st)
	}
	want = append(want, "t/2/", "t/2/outputs/", "t/2/stdout", "t/2/stdout"+timesSuffix)
	slices.Sort(want)
	if got := tree(t, run); !slices.Equal(got, want) {
		t.Errorf("after the second attempt the run holds %q, want %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(run, "t", "2", "stdout")); err != nil || string(b) != "out\n" {
		t.Errorf("the second attempt's stdout is %q (%v), want %q", b, err, "out\n")
	}
}

// TestALaterAttemptWhoseTaskDirectoryIsGoneStillStarts launches a second
// attempt of a task whose directory nothing made (its first attempt ran
// on a home since cleared): the number says the directory is there, the
// launch finds it is not and makes it.
func TestALaterAttemptWhoseTaskDirectoryIsGoneStillStarts(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.launch(t, "r-gone/t/3", "sh", "-c", "echo here > \"$KILN_OUTPUTS/o\"")
	if st := h.waitExit(t, spec); !st.Succeeded() {
		t.Fatalf("the attempt ended %+v, want success", st)
	}
	if b, err := os.ReadFile(filepath.Join(AttemptDir(h.home, spec.ID), outputsDir, "o")); err != nil || string(b) != "here\n" {
		t.Errorf("its output is %q (%v), want %q", b, err, "here\n")
	}
}

// TestALaunchRecordsTheStartTimesProcGives starts gangs of processes and
// compares the start time the launch recorded for each, read from the
// clock around its fork, with the one /proc gives while it runs: a
// record that differed would let a lost attempt's processes outlive it.
func TestALaunchRecordsTheStartTimesProcGives(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	env := os.Environ()
	for n := range 5 {
		spec := &job.Spec{ID: mustID(t, "r-ticks/g/"+strconv.Itoa(n+1))}
		for _, name := range []string{"a", "b", "c", "d"} {
			spec.Processes = append(spec.Processes, job.Process{Name: name, Command: []string{"sleep", "300"}, Env: env})
		}
		if err := h.b.Launch(t.Context(), spec); err != nil {
			t.Fatal(err)
		}
		recs, err := readRecords(h.home, spec.ID.String())
		if err != nil || recs.launch == nil {
			t.Fatalf("launch record %+v (%v)", recs, err)
		}
		l := recs.launch
		for i, pid := range l.PIDs {
			if proc := startTicks(pid); proc == 0 || !l.started(i, proc) {
				t.Errorf("process %d of %s: recorded start %d to %v, /proc says %d", pid, spec.ID, l.StartTicks[i], l.StartTicksUntil, proc)
			}
		}
		if err := h.b.Abort(t.Context(), spec.ID, 0); err != nil {
			t.Fatal(err)
		}
		h.waitExit(t, spec)
	}
}

// TestALaunchLineIsWhatJSONWrites compares the journal's hand-written
// launch line with json.Marshal's, and reads it back.
func TestALaunchLineIsWhatJSONWrites(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 15, 4, 5, 123456789, time.FixedZone("x", 3600))
	for _, l := range []*launchRecord{
		{PIDs: []int{12}, StartTicks: []uint64{345}, Supervisor: "0a1b2c", StartedAt: at.UTC()},
		{PIDs: []int{1, 2, 4194304}, StartTicks: []uint64{0, 7, 1 << 40}, Supervisor: "ff", StartedAt: at},
		{PIDs: []int{5}, StartTicks: []uint64{6}, Supervisor: "ab", StartedAt: time.Time{}},
		{PIDs: []int{5, 6}, StartTicks: []uint64{6, 7}, StartTicksUntil: []uint64{6, 9}, Supervisor: "ab", StartedAt: at},
	} {
		e := journalEntry{ID: "run-1/train.3/12", Launch: l}
		got := lineAsJSON(t, e)
		var back attemptRecords
		if _, err := back.read(bytes.NewReader(got), e.ID); err != nil || back.launch == nil || !slices.Equal(back.launch.PIDs, l.PIDs) || !back.launch.StartedAt.Equal(l.StartedAt) {
			t.Errorf("line %s read back as %+v (%v)", got, back.launch, err)
		}
	}
}

// TestTheClockBeforeAForkIsNeverAhead reads the boot clock's lower bound,
// kept without a system call, against the clock itself: a bound ahead of
// it would record a start after the process's own.
func TestTheClockBeforeAForkIsNeverAhead(t *testing.T) {
	t.Parallel()
	var c bootClock
	for i := range 10000 {
		if i%100 == 0 {
			c.now()
		}
		before := c.before()
		if now := uint64(bootNanos()) / tickNanos; before == 0 || before > now {
			t.Fatalf("reading %d: the bound before is tick %d, the clock then %d", i, before, now)
		}
	}
}

// TestAProcessIsKnownByItsStartTick tells the process a launch started
// from one of the same PID started at another time.
func TestAProcessIsKnownByItsStartTick(t *testing.T) {
	t.Parallel()
	exact := &launchRecord{PIDs: []int{9, 10}, StartTicks: []uint64{100, 0}}
	window := &launchRecord{PIDs: []int{9}, StartTicks: []uint64{100}, StartTicksUntil: []uint64{102}}
	for _, c := range []struct {
		l     *launchRecord
		i     int
		ticks uint64
		want  bool
	}{
		{exact, 0, 100, true},
		{exact, 0, 101, false},
		{exact, 0, 99, false},
		{exact, 1, 0, false}, // not recorded: never taken for the launch's
		{exact, 2, 100, false},
		{window, 0, 99, false},
		{window, 0, 100, true},
		{window, 0, 102, true},
		{window, 0, 103, false},
	} {
		if got := c.l.started(c.i, c.ticks); got != c.want {
			t.Errorf("%+v: process %d started at %d = %v, want %v", c.l, c.i, c.ticks, got, c.want)
		}
	}
}

// TestAnotherEngineFollowsTheLogsOfARunningAttempt launches an attempt
// from one engine and follows its logs from another on the same home, as
// an engine does that adopted the attempt after the first was killed:
// the lines written before it looked and after, in order, with their
// times, until the attempt ends.
func TestAnotherEngineFollowsTheLogsOfARunningAttempt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "go")
	spec := h.launch(t, "r-adopt/t/1", "sh", "-c", `echo before; echo err >&2; while [ ! -e "$0" ]; do sleep 0.05; done; echo after`, gate)
	dir := AttemptDir(h.home, spec.ID)
	// Both streams are captured before the gate opens, so that "after"
	// is the last line; stdout's and stderr's lines before it are
	// stamped by two readers, in either order.
	waitText(t, filepath.Join(dir, "stdout"), "before")
	waitText(t, filepath.Join(dir, "stderr"), "err")
	other := New(Config{Home: h.home, SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + h.home, os.Args[0]}})
	defer other.Close()
	var out bytes.Buffer
	followed := make(chan error, 1)
	go func() {
		followed <- other.Logs(t.Context(), spec.ID, backend.LogOptions{Follow: true, Timestamps: true}, &out)
	}()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-followed; err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		stamp, text, _ := strings.Cut(l, " ")
		if _, err := time.Parse(time.RFC3339Nano, stamp); err != nil {
			t.Errorf("line %q has no time: %v", l, err)
		}
		lines = append(lines, text)
	}
	if len(lines) != 3 || lines[2] != "after" || !slices.Contains(lines, "before") || !slices.Contains(lines, "err") {
		t.Errorf("followed logs are %q, want before and err (in either order), then after", lines)
	}
}

// waitText waits for the file at path to hold text.
func waitText(t *testing.T, path, text string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; runtimeGosched() {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %q", path, text)
		}
	}
}

// tree lists what is under dir, directories with a slash after them.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
