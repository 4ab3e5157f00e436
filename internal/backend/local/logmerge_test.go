package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// inTurn defines, for a script run as `sh -c SCRIPT DIR` with DIR its
// attempt's directory, "seen LOG TEXT": wait until the supervisor has
// appended TEXT to the log LOG, and "sized LOG N": until LOG holds N
// bytes. A line written after either is read after what it waited for,
// however loaded the machine: the order is made by state, not by sleeps.
const inTurn = `seen() { until grep -qF "$2" "$0/$1" 2>/dev/null; do sleep .01; done; }; ` +
	`sized() { until [ "$(stat -c %s "$0/$1" 2>/dev/null || echo 0)" -ge "$2" ]; do sleep .01; done; }; `

// interleaved writes to stdout and stderr in turn, each line once the
// one before it is in its log.
const interleaved = inTurn + "echo out1; seen stdout out1; echo err1 >&2; seen stderr err1; echo out2; seen stdout out2; echo err2 >&2; seen stderr err2; echo out3"

// launchInTurn launches a one-process attempt id that runs script, made
// with inTurn, in its attempt's directory.
func (h *harness) launchInTurn(t *testing.T, id, script string) *job.Spec {
	t.Helper()
	return h.launch(t, id, "sh", "-c", script, AttemptDir(h.home, mustID(t, id)))
}

// untimed strips the times of lines written with Timestamps, checking
// that they never go back.
func untimed(t *testing.T, logs string) string {
	t.Helper()
	var out []string
	var last time.Time
	for line := range strings.Lines(logs) {
		at, rest := stamped(t, strings.TrimSuffix(line, "\n"))
		if at.Before(last) {
			t.Errorf("line %q at %v comes after one at %v", rest, at, last)
		}
		last = at
		out = append(out, rest)
	}
	return strings.Join(out, ",")
}

// TestStdoutAndStderrComeInTheOrderWritten runs a task that writes to
// stdout and stderr in turn: its log has their lines in that order, read
// whole or followed while it runs, with times that never go back, and
// tail keeps the last lines of both streams together.
func TestStdoutAndStderrComeInTheOrderWritten(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.launchInTurn(t, "r/turns/1", interleaved)
	followed := h.logsOf(t, spec.ID, backend.LogOptions{Follow: true})
	h.waitExit(t, spec)
	const want = "out1\nerr1\nout2\nerr2\nout3\n"
	if followed != want {
		t.Errorf("followed logs = %q, want %q", followed, want)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{}); got != want {
		t.Errorf("logs = %q, want %q", got, want)
	}
	if got := untimed(t, h.logsOf(t, spec.ID, backend.LogOptions{Timestamps: true})); got != "out1,err1,out2,err2,out3" {
		t.Errorf("timed logs, less their times = %s", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Tail: 2}); got != "err2\nout3\n" {
		t.Errorf("tail 2 = %q, want the last two lines of stdout and stderr together", got)
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Tail: 9}); got != want {
		t.Errorf("tail 9 = %q, want all %q", got, want)
	}
}

// TestFollowedGangLinesInterleave follows a gang whose processes write in
// turn: their lines come interleaved as written, each with its label, and
// tail keeps each process's last line.
func TestFollowedGangLinesInterleave(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := mustID(t, "r/turns/2")
	dir := AttemptDir(h.home, id)
	spec := &job.Spec{ID: id, Processes: []job.Process{
		{Name: "ps-0", Command: []string{"sh", "-c", inTurn + "echo a; seen worker-1.stderr b; echo c >&2; seen worker-1.stdout d; echo e", dir}, Env: os.Environ()},
		{Name: "worker-1", Host: 1, Command: []string{"sh", "-c", inTurn + "seen ps-0.stdout a; echo b >&2; seen ps-0.stderr c; echo d", dir}, Env: os.Environ()},
	}}
	if err := h.b.Launch(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	got := untimed(t, h.logsOf(t, spec.ID, backend.LogOptions{Follow: true, Timestamps: true}))
	if want := "ps-0 | a,worker-1 | b,ps-0 | c,worker-1 | d,ps-0 | e"; got != want {
		t.Errorf("followed gang lines = %s, want %s", got, want)
	}
	h.waitExit(t, spec)
	if got := h.logsOf(t, spec.ID, backend.LogOptions{Tail: 1}); got != "worker-1 | d\nps-0 | e\n" {
		t.Errorf("tail 1 = %q, want each process's last line, in time order", got)
	}
}

// TestLogsWithoutTimesKeepTheirOrder reads an attempt from before the
// time indexes: its stdout, then its stderr, as kiln served them then.
func TestLogsWithoutTimesKeepTheirOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.launchInTurn(t, "r/turns/3", interleaved)
	h.waitExit(t, spec)
	dir := AttemptDir(h.home, spec.ID)
	for _, name := range []string{"stdout", "stderr"} {
		if err := os.Remove(filepath.Join(dir, name+timesSuffix)); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.logsOf(t, spec.ID, backend.LogOptions{}); got != "out1\nout2\nout3\nerr1\nerr2\n" {
		t.Errorf("untimed logs = %q, want stdout then stderr", got)
	}
}

// TestLongLinesPassWhole writes a line far longer than what a log holds
// at once, around lines of stderr: it comes whole, with the others
// before and after it.
func TestLongLinesPassWhole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	spec := h.launchInTurn(t, "r/long/1", inTurn+
		"echo before >&2; seen stderr before; head -c 300000 /dev/zero | tr '\\0' x; echo; sized stdout 300001; echo after >&2; seen stderr after; head -c 100000 /dev/zero | tr '\\0' y")
	for _, opts := range []backend.LogOptions{{Follow: true}, {}} {
		got := h.logsOf(t, spec.ID, opts)
		want := "before\n" + strings.Repeat("x", 300000) + "\nafter\n" + strings.Repeat("y", 100000) + "\n"
		if got != want {
			t.Errorf("logs (%+v) are %d bytes, %q...%q; want %d", opts, len(got), got[:min(20, len(got))], got[max(0, len(got)-20):], len(want))
		}
	}
}
