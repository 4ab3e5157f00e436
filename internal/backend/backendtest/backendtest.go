// Package backendtest is the conformance suite of backends: what the
// engine relies on, checked against every implementation (the local
// backend with real processes, the kubernetes backend on the test
// cluster) in the shape of River's riverdrivertest.
package backendtest

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// Proc is how one process of a test attempt behaves.
type Proc struct {
	// Name is the process's name: empty for a task's only process.
	Name string
	// Host is the node it runs on.
	Host int
	// Exit is the code it exits with, after a short while; unless Forever.
	Exit int
	// Forever keeps it running until it is stopped.
	Forever bool
	// Outputs are output parameters it writes before exiting.
	Outputs map[string]string
}

// Harness is one place (a kiln home, a namespace) backends run attempts
// in, and what the suite needs to steer and check them there.
type Harness interface {
	// Backend returns a new backend on the harness's place, as a restarted
	// engine would get one. Its cleanup is arranged with t.Cleanup.
	Backend(t *testing.T) backend.Backend
	// Shape fills in spec (its ID, declared outputs and artifacts and
	// leader set) so that its processes, one per Proc, behave as procs say.
	Shape(t *testing.T, spec *job.Spec, procs ...Proc) *job.Spec
	// Started counts how many times attempt id's processes were started.
	Started(t *testing.T, id job.AttemptID) int
	// LogLine is a line Logs must show for process p of a finished attempt.
	LogLine(p Proc) string
}

// Run runs the suite; newHarness returns a harness on a fresh place. A
// case of a capability the backend lacks is skipped by the capability's
// name, and a last line lists the cases run and skipped.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	var sum summary
	t.Cleanup(func() { t.Log(sum.String()) })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			t.Cleanup(func() { sum.add(c.what, t.Skipped()) })
			c.run(t, newHarness(t))
		})
	}
}

// cases are the suite's cases, in the order they are listed.
var cases = []struct {
	what, name string // what: the method or capability checked
	run        func(t *testing.T, h Harness)
}{
	{"Launch+Observe", "an attempt runs and is observed to exit with its code", testExit},
	{"Launch twice", "a launch repeated, by this backend or another, starts nothing twice", testIdempotent},
	{"Observe outputs", "outputs come back and a missing artifact is an output error", testOutputs},
	{"Abort", "abort stops a running attempt", testAbort},
	{"gang", "a failing member takes its gang down and decides", testGang},
	{"leader", "a leader that ends decides for its gang", testLeader},
	{"adoption", "a restarted backend adopts a running attempt", testAdopt},
	{"Logger", "Logger: logs show what each process wrote, following until the end", testLogs},
	{"Notifier", "Notifier: Watch resyncs first and reports an exit", testWatch},
	{"Networker", "Networker: Network gives the same hosts and ports every time", testNetwork},
	{"Joiner", "Joiner: an elastic gang grows by a host", testJoin},
	{"Releaser", "Releaser: releasing an ended attempt, again, is harmless", testRelease},
	{"RunRemover", "RunRemover: RemoveRun refuses while an attempt runs, then removes what it left", testRemoveRun},
	{"FileReader", "FileReader: ReadFile reads what an attempt wrote, within a limit", testReadFile},
	{"HostOutputs", "HostOutputs: outputs lie in the host's output directory", testHostOutputs},
	{"Named", "Named: the backend names its kind", testNamed},
}

// summary collects which cases ran and which were skipped.
type summary struct {
	mu           sync.Mutex
	ran, skipped []string
}

func (s *summary) add(name string, skipped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if skipped {
		s.skipped = append(s.skipped, name)
	} else {
		s.ran = append(s.ran, name)
	}
}

// String is the summary as one line per group.
func (s *summary) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(s.ran)
	slices.Sort(s.skipped)
	return fmt.Sprintf("conformance: ran %s; skipped %s", list(s.ran), list(s.skipped))
}

// list is names joined, or "none".
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// capability returns b as capability T, or skips the test by the
// capability's name.
func capability[T any](t *testing.T, b backend.Backend, name string) T {
	t.Helper()
	c, ok := backend.As[T](b)
	if !ok {
		t.Skipf("backend has no %s", name)
	}
	return c
}

// timeout bounds every wait of the suite.
const timeout = 60 * time.Second

func id(node string) job.AttemptID { return job.AttemptID{Run: "conf-aaaaa", Node: node, Number: 1} }

// spec is a spec of attempt node/1 whose processes behave as procs say.
func spec(t *testing.T, h Harness, node string, procs ...Proc) *job.Spec {
	return h.Shape(t, &job.Spec{ID: id(node)}, procs...)
}

func launch(t *testing.T, b backend.Backend, spec *job.Spec) {
	t.Helper()
	if err := b.Launch(t.Context(), spec); err != nil {
		t.Fatalf("Launch(%s): %v", spec.ID, err)
	}
}

// waitState polls Observe until the attempt is in state, and returns its status.
func waitState(t *testing.T, b backend.Backend, spec *job.Spec, state job.State) job.Status {
	t.Helper()
	return waitStatus(t, b, spec, fmt.Sprintf("in state %d", state), func(st job.Status) bool { return st.State == state })
}

// waitStatus polls Observe until the attempt's status is as want says
// (what describes it), and returns it.
func waitStatus(t *testing.T, b backend.Backend, spec *job.Spec, what string, want func(job.Status) bool) job.Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := b.Observe(t.Context(), spec)
		if err == nil && want(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempt %s was never %s (last %+v, %v)", spec.ID, what, st, err)
		}
		pause(t.Context(), 20*time.Millisecond)
	}
}

// waitStarted waits until h counts a start of spec's processes.
func waitStarted(t *testing.T, h Harness, spec *job.Spec) {
	t.Helper()
	for deadline := time.Now().Add(timeout); h.Started(t, spec.ID) == 0; pause(t.Context(), 20*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("attempt %s runs, but its processes never counted a start", spec.ID)
		}
	}
}

func pause(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

func testExit(t *testing.T, h Harness) {
	b := h.Backend(t)
	ok, bad := spec(t, h, "ok", Proc{}), spec(t, h, "bad", Proc{Exit: 3})
	if st, err := b.Observe(t.Context(), ok); err != nil || st.State != job.StateUnknown {
		t.Errorf("Observe before Launch = %+v, %v; want StateUnknown", st, err)
	}
	launch(t, b, ok)
	launch(t, b, bad)
	if st := waitState(t, b, ok, job.StateExited); !st.Succeeded() || st.ExitCode != 0 {
		t.Errorf("an attempt that exits 0 = %+v, want success", st)
	}
	if st := waitState(t, b, bad, job.StateExited); st.Succeeded() || st.ExitCode != 3 {
		t.Errorf("an attempt that exits 3 = %+v, want exit code 3", st)
	}
}

func testIdempotent(t *testing.T, h Harness) {
	b, other := h.Backend(t), h.Backend(t)
	s := spec(t, h, "once", Proc{})
	for range 3 {
		launch(t, b, s)
	}
	launch(t, other, s)
	waitState(t, b, s, job.StateExited)
	launch(t, b, s) // after it ended, too
	if n := h.Started(t, s.ID); n != 1 {
		t.Errorf("five launches started the attempt %d times, want once", n)
	}
}

func testOutputs(t *testing.T, h Harness) {
	b := h.Backend(t)
	out := h.Shape(t, &job.Spec{ID: id("outputs"), Outputs: []string{"answer"}}, Proc{Outputs: map[string]string{"answer": "42"}})
	launch(t, b, out)
	if st := waitState(t, b, out, job.StateExited); !st.Succeeded() || st.Outputs["answer"] != "42" {
		t.Errorf("status = %+v, want success with answer=42", st)
	}
	missing := h.Shape(t, &job.Spec{ID: id("artifact"), Artifacts: []string{"model/weights.bin"}}, Proc{})
	launch(t, b, missing)
	if st := waitState(t, b, missing, job.StateExited); st.Succeeded() || !strings.Contains(st.OutputError, `"model/weights.bin"`) {
		t.Errorf("status = %+v, want an output error naming the artifact", st)
	}
}

func testAbort(t *testing.T, h Harness) {
	b := h.Backend(t)
	s := spec(t, h, "forever", Proc{Forever: true})
	launch(t, b, s)
	waitState(t, b, s, job.StateRunning)
	for range 2 { // a repeated abort is harmless
		if err := b.Abort(t.Context(), s.ID, time.Second); err != nil {
			t.Fatalf("Abort: %v", err)
		}
	}
	if st := waitState(t, b, s, job.StateExited); st.Succeeded() {
		t.Errorf("an aborted attempt = %+v, want it ended unsuccessfully", st)
	}
	if err := b.Abort(t.Context(), id("never-launched"), time.Second); err != nil {
		t.Errorf("Abort of an attempt never launched: %v, want nothing to happen", err)
	}
}

func testGang(t *testing.T, h Harness) {
	b := h.Backend(t)
	s := spec(t, h, "gang",
		Proc{Name: "node-0", Host: 0, Forever: true},
		Proc{Name: "node-1", Host: 1, Exit: 3},
		Proc{Name: "node-2", Host: 2, Forever: true})
	launch(t, b, s)
	st := waitState(t, b, s, job.StateExited)
	if st.ExitCode != 3 || st.Failed != "node-1" {
		t.Errorf("gang = %+v, want exit 3 decided by node-1", st)
	}
	for _, name := range []string{"node-0", "node-2"} {
		if code, ok := st.Processes[name]; !ok || code == 0 {
			t.Errorf("member %s = %d (reported %v), want it stopped with the gang", name, code, ok)
		}
	}
	slices.Sort(st.StoppedProcesses)
	if !slices.Equal(st.StoppedProcesses, []string{"node-0", "node-2"}) {
		t.Errorf("stopped processes = %v, want node-0 and node-2, not node-1, which failed on its own", st.StoppedProcesses)
	}
}

func testLeader(t *testing.T, h Harness) {
	b := h.Backend(t)
	s := h.Shape(t, &job.Spec{ID: id("led"), Leader: "chief-0"},
		Proc{Name: "chief-0", Host: 0, Exit: 0},
		Proc{Name: "ps-0", Host: 1, Forever: true})
	launch(t, b, s)
	if st := waitState(t, b, s, job.StateExited); !st.Succeeded() {
		t.Errorf("gang = %+v, want success decided by its leader while ps-0 ran on", st)
	}
}

func testAdopt(t *testing.T, h Harness) {
	first := h.Backend(t)
	s := spec(t, h, "adopted", Proc{Forever: true})
	launch(t, first, s)
	waitState(t, first, s, job.StateRunning)
	if c, ok := first.(io.Closer); ok {
		c.Close() // the engine that launched it goes away
	}
	second := h.Backend(t)
	waitState(t, second, s, job.StateRunning)
	waitStarted(t, h, s) // before the abort can stop it, or it counts no start
	if err := second.Abort(t.Context(), s.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	waitState(t, second, s, job.StateExited)
	if n := h.Started(t, s.ID); n != 1 {
		t.Errorf("the adopted attempt was started %d times, want once", n)
	}
}

func testLogs(t *testing.T, h Harness) {
	b := h.Backend(t)
	l := capability[backend.Logger](t, b, "Logger")
	procs := []Proc{{Name: "node-0", Host: 0}, {Name: "node-1", Host: 1}}
	s := spec(t, h, "logs", procs...)
	launch(t, b, s)
	waitState(t, b, s, job.StateRunning)
	var followed strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	if err := l.Logs(ctx, s.ID, backend.LogOptions{Follow: true}, &followed); err != nil || ctx.Err() != nil {
		t.Fatalf("following the logs: %v (%v); want them to end with the attempt", err, ctx.Err())
	}
	waitState(t, b, s, job.StateExited)
	var read strings.Builder
	if err := l.Logs(t.Context(), s.ID, backend.LogOptions{}, &read); err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		want := p.Name + " | " + h.LogLine(p)
		for what, got := range map[string]string{"followed": followed.String(), "read": read.String()} {
			if !strings.Contains(got, want) {
				t.Errorf("%s logs lack %q:\n%s", what, want, got)
			}
		}
	}
}
