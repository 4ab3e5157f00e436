package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// logsOf reads attempt id's logs as opts say.
func (h *harness) logsOf(t *testing.T, id job.AttemptID, opts backend.LogOptions) string {
	t.Helper()
	var b strings.Builder
	if err := h.b.Logs(t.Context(), id, opts, &b); err != nil {
		t.Fatalf("Logs(%+v): %v", opts, err)
	}
	return b.String()
}

// stamped splits a line written with Timestamps into its time and the rest.
func stamped(t *testing.T, line string) (time.Time, string) {
	t.Helper()
	ts, rest, _ := strings.Cut(line, " ")
	at, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil || len(ts) != len(timestampLayout)-len("Z07:00")+1 {
		t.Fatalf("line %q does not start with a time in RFC 3339 with 9 digits of nanoseconds: %v", line, err)
	}
	return at, rest
}

// TestLogLinesKeepTheTimeTheyWereWritten runs a task that writes lines
// apart in time, the last one unfinished: its log file holds what it
// wrote, byte for byte, and Logs gives each line the time the supervisor
// read it, keeps the last lines (tail) or those written since a time.
func TestLogLinesKeepTheTimeTheyWereWritten(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := time.Now()
	// "two" is written 0.4 s after "one" was read, so their times are at
	// least that far apart however late the supervisor reads.
	spec := h.launchInTurn(t, "r/timed/1", inTurn+"echo one; seen stdout one; sleep 0.4; echo two; echo three; printf four; sized stdout 18; echo err >&2")
	h.waitExit(t, spec)
	after := time.Now()

	raw, err := os.ReadFile(filepath.Join(AttemptDir(h.home, spec.ID), "stdout"))
	if err != nil || string(raw) != "one\ntwo\nthree\nfour" {
		t.Fatalf("the log file holds %q (%v), want exactly what the task wrote", raw, err)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{}); got != "one\ntwo\nthree\nfour\nerr\n" {
		t.Errorf("plain logs = %q, want the lines as written, the unfinished one ended", got)
	}

	lines := strings.Split(strings.TrimSuffix(h.logsOf(t, spec.ID, backend.LogOptions{Timestamps: true}), "\n"), "\n")
	want := []string{"one", "two", "three", "four", "err"}
	if len(lines) != len(want) {
		t.Fatalf("timed logs have %d lines, want %d: %q", len(lines), len(want), lines)
	}
	times := map[string]time.Time{}
	for i, line := range lines {
		at, rest := stamped(t, line)
		if rest != want[i] || at.Before(before) || at.After(after) {
			t.Errorf("line %d = %q at %v; want %q, written between %v and %v", i, rest, at, want[i], before, after)
		}
		times[rest] = at
	}
	if gap := times["two"].Sub(times["one"]); gap < 400*time.Millisecond {
		t.Errorf("a line written 0.4s after the one before it was read is timed %v after it", gap)
	}

	if got := h.logsOf(t, spec.ID, backend.LogOptions{Tail: 2}); got != "four\nerr\n" {
		t.Errorf("tail 2 = %q, want the process's last two lines, of stdout and stderr together (the unfinished one counts)", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Since: times["two"]}); !strings.HasPrefix(got, "two\nthree\nfour\n") {
		t.Errorf("since the second line = %q, want it and what came after", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Since: times["one"].Add(200 * time.Millisecond)}); got != "two\nthree\nfour\nerr\n" {
		t.Errorf("since between the first line and the second = %q, want all but the first", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Since: after.Add(time.Second)}); got != "" {
		t.Errorf("since after the end = %q, want nothing", got)
	}
}

// TestGangLinesAreLabelledAfterTheirTime checks a gang's lines carry their
// process's name, after their time when asked for times.
func TestGangLinesAreLabelledAfterTheirTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := mustID(t, "r/gang/1")
	dir := AttemptDir(h.home, id)
	spec := &job.Spec{ID: id, Processes: []job.Process{
		{Name: "node-0", Command: []string{"sh", "-c", inTurn + "echo zero; seen node-1.stdout one; echo two", dir}, Env: os.Environ()},
		{Name: "node-1", Host: 1, Command: []string{"sh", "-c", inTurn + "seen node-0.stdout zero; echo one; seen node-0.stdout two; echo three", dir}, Env: os.Environ()},
	}}
	if err := h.b.Launch(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	h.waitExit(t, spec)
	if got := h.logsOf(t, spec.ID, backend.LogOptions{}); got != "node-0 | zero\nnode-1 | one\nnode-0 | two\nnode-1 | three\n" {
		t.Errorf("gang logs = %q, want the processes' lines interleaved as they were written", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Tail: 1}); got != "node-0 | two\nnode-1 | three\n" {
		t.Errorf("gang logs, tail 1 = %q, want each process's last line", got)
	}
	var rests []string
	for line := range strings.Lines(h.logsOf(t, spec.ID, backend.LogOptions{Timestamps: true})) {
		_, rest := stamped(t, strings.TrimSuffix(line, "\n"))
		rests = append(rests, rest)
	}
	if got := strings.Join(rests, ","); got != "node-0 | zero,node-1 | one,node-0 | two,node-1 | three" {
		t.Errorf("timed gang lines, less their times = %s", got)
	}
}

// TestLogsWithoutTimesAreServedUntimed reads an attempt from before kiln
// recorded when lines were written: its lines come without a time rather
// than with a made-up one, and since keeps them unless the whole log was
// written before it.
func TestLogsWithoutTimesAreServedUntimed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.launch(t, "r/old/1", "sh", "-c", "echo a; echo b")
	h.waitExit(t, spec)
	dir := AttemptDir(h.home, spec.ID)
	if err := os.Remove(filepath.Join(dir, "stdout"+timesSuffix)); err != nil {
		t.Fatal(err)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Timestamps: true}); got != "a\nb\n" {
		t.Errorf("untimed logs with timestamps = %q, want the lines without times", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Since: time.Now().Add(-time.Hour)}); got != "a\nb\n" {
		t.Errorf("since an hour ago = %q, want every line: the log was written since", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Since: time.Now().Add(time.Hour)}); got != "" {
		t.Errorf("since an hour ahead = %q, want none: the log was written before", got)
	}
}

// TestFollowedLogsAreTimed follows a running task with timestamps: the
// lines arrive with their times while it runs, and the unfinished last
// one at its end.
func TestFollowedLogsAreTimed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.launch(t, "r/followed/1", "sh", "-c", "echo first; sleep 0.5; echo second; printf last")
	got := h.logsOf(t, spec.ID, backend.LogOptions{Follow: true, Timestamps: true, Tail: 5})
	var rests []string
	for line := range strings.Lines(got) {
		_, rest := stamped(t, strings.TrimSuffix(line, "\n"))
		rests = append(rests, rest)
	}
	if strings.Join(rests, ",") != "first,second,last" {
		t.Errorf("followed timed logs = %q", got)
	}
}

// TestOutputHeldOpenDoesNotHoldTheEnd runs a task that leaves behind a
// process of its own session, outside its process group, holding its
// stdout: the attempt ends while that process still runs, its log whole.
func TestOutputHeldOpenDoesNotHoldTheEnd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pidFile := filepath.Join(t.TempDir(), "holder")
	holder := func() int {
		b, _ := os.ReadFile(pidFile)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid
	}
	t.Cleanup(func() {
		if pid := holder(); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	spec := h.launch(t, "r/held/1", "sh", "-c", `setsid sleep 600 & echo $! > "$0"; echo hi`, pidFile)
	h.waitExit(t, spec)
	if pid := holder(); pid <= 0 || syscall.Kill(pid, 0) != nil {
		t.Errorf("the attempt ended only after the process holding its output (%d) had ended", pid)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{}); got != "hi\n" {
		t.Errorf("logs = %q", got)
	}
}
