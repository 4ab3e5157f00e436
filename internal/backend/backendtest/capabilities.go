package backendtest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// exit is one call of a Watch's exited.
type exit struct {
	id job.AttemptID
	st job.Status
}

func testWatch(t *testing.T, h Harness) {
	b := h.Backend(t)
	n := capability[backend.Notifier](t, b, "Notifier")
	ctx, cancel := context.WithCancel(t.Context())
	exits, resyncs, done := make(chan exit, 64), make(chan struct{}, 1), make(chan struct{})
	go func() {
		defer close(done)
		n.Watch(ctx, func(id job.AttemptID, st job.Status) {
			select {
			case exits <- exit{id, st}:
			case <-ctx.Done():
			}
		}, func() {
			select {
			case resyncs <- struct{}{}:
			default:
			}
		})
	}()
	defer func() { cancel(); <-done }()
	wait(t, resyncs, "Watch never called resync: reports before it started may have been missed")
	s := spec(t, h, "watched", Proc{Exit: 3})
	launch(t, b, s)
	for {
		e := wait(t, exits, "Watch never reported the attempt's exit")
		if e.id != s.ID || e.st.State != job.StateExited {
			continue // another report, or one of it running (a placement)
		}
		if e.st.ExitCode != 3 {
			t.Errorf("Watch reported %+v, want exit code 3", e.st)
		}
		return
	}
}

// wait returns the next value of c, failing the test with msg when none
// comes within the suite's timeout.
func wait[V any](t *testing.T, c <-chan V, msg string) V {
	t.Helper()
	tm := time.NewTimer(timeout)
	defer tm.Stop()
	select {
	case v := <-c:
		return v
	case <-tm.C:
		t.Fatal(msg)
	}
	panic("unreachable")
}

func testNetwork(t *testing.T, h Harness) {
	b := h.Backend(t)
	nw := capability[backend.Networker](t, b, "Networker")
	first, err := nw.Network(t.Context(), id("net"), 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Hosts) != 3 || len(first.Ports) != 2 || first.Ports[0] == first.Ports[1] {
		t.Fatalf("Network(3 nodes, 2 ports) = %+v, want 3 hosts and 2 distinct ports", first)
	}
	restarted := capability[backend.Networker](t, h.Backend(t), "Networker")
	for _, again := range []backend.Networker{nw, restarted} {
		got, err := again.Network(t.Context(), id("net"), 3, 2)
		if err != nil || !slices.Equal(got.Hosts, first.Hosts) || !slices.Equal(got.Ports, first.Ports) {
			t.Errorf("Network asked again = %+v, %v; want %+v, as a rebuilt spec must match the one launched", got, err, first)
		}
	}
}

func testJoin(t *testing.T, h Harness) {
	b := h.Backend(t)
	j := capability[backend.Joiner](t, b, "Joiner")
	one := Proc{Name: "node-0", Host: 0, Forever: true}
	s := h.Shape(t, &job.Spec{ID: id("elastic"), MinHosts: 1}, one)
	launch(t, b, s)
	waitState(t, b, s, job.StateRunning)
	// The host that joins fails: the gang, counting it as a member,
	// drops it and runs on.
	grown := h.Shape(t, &job.Spec{ID: id("elastic"), MinHosts: 1}, one, Proc{Name: "node-1", Host: 1, Exit: 3})
	for range 2 { // a repeated join starts nothing twice
		if err := j.Join(t.Context(), grown, 1); err != nil {
			t.Fatalf("Join: %v", err)
		}
	}
	waitStatus(t, b, grown, "running on without node-1, which joined and failed", func(st job.Status) bool {
		return st.State == job.StateRunning && slices.Contains(st.Dropped, "node-1")
	})
	if err := b.Abort(t.Context(), s.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, grown, job.StateExited)
	if n := h.Started(t, s.ID); n != 1 {
		t.Errorf("the grown gang's processes were started %d times, want once", n)
	}
}

func testRelease(t *testing.T, h Harness) {
	b := h.Backend(t)
	r := capability[backend.Releaser](t, b, "Releaser")
	s := spec(t, h, "released", Proc{})
	launch(t, b, s)
	waitState(t, b, s, job.StateExited)
	for range 2 {
		if err := r.Release(t.Context(), s.ID, true); err != nil {
			t.Fatalf("Release: %v", err)
		}
	}
	if err := r.Release(t.Context(), id("never-launched"), false); err != nil {
		t.Errorf("Release of an attempt never launched: %v, want nothing to happen", err)
	}
}

func testRemoveRun(t *testing.T, h Harness) {
	b := h.Backend(t)
	rr := capability[backend.RunRemover](t, b, "RunRemover")
	s := h.Shape(t, &job.Spec{ID: id("removed")}, Proc{Forever: true, Outputs: map[string]string{"left": "behind"}})
	launch(t, b, s)
	waitState(t, b, s, job.StateRunning)
	waitStarted(t, h, s)
	if err := rr.RemoveRun(t.Context(), s.ID.Run); err == nil {
		t.Error("RemoveRun while an attempt of the run runs succeeded; want it refused")
	}
	if err := b.Abort(t.Context(), s.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, s, job.StateExited)
	for range 2 { // what is gone already is no error
		if err := rr.RemoveRun(t.Context(), s.ID.Run); err != nil {
			t.Fatalf("RemoveRun of an ended run: %v", err)
		}
	}
	if fr, ok := backend.As[backend.FileReader](b); ok {
		if _, err := fr.ReadFile(t.Context(), s.ID, "left", 1<<10); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("reading a file of a removed run: %v, want it gone", err)
		}
	}
	if ho, ok := backend.As[backend.HostOutputs](b); ok {
		if _, err := os.Stat(ho.HostOutputDir(s.ID)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the output directory of a removed run: %v, want it gone", err)
		}
	}
}

func testReadFile(t *testing.T, h Harness) {
	b := h.Backend(t)
	fr := capability[backend.FileReader](t, b, "FileReader")
	const report = `{"step": 7}`
	s := h.Shape(t, &job.Spec{ID: id("files")}, Proc{Forever: true, Outputs: map[string]string{"report.json": report}})
	launch(t, b, s)
	waitState(t, b, s, job.StateRunning)
	// The shell creates the file before it writes it: wait until it is
	// whole.
	var data []byte
	for deadline := time.Now().Add(timeout); ; pause(t.Context(), 20*time.Millisecond) {
		var err error
		data, err = fr.ReadFile(t.Context(), s.ID, "report.json", 1<<10)
		if err == nil && len(data) >= len(report) {
			break
		}
		if (err != nil && !errors.Is(err, fs.ErrNotExist)) || time.Now().After(deadline) {
			t.Fatalf("ReadFile of a file the attempt writes: %q, %v", data, err)
		}
	}
	if string(data) != report {
		t.Errorf("ReadFile = %q, want %q", data, report)
	}
	if _, err := fr.ReadFile(t.Context(), s.ID, "report.json", 3); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a file over the limit: %v, want an error that is not a missing file", err)
	}
	if _, err := fr.ReadFile(t.Context(), s.ID, "absent.json", 1<<10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a file never written: %v, want one that wraps fs.ErrNotExist", err)
	}
	if err := b.Abort(t.Context(), s.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, s, job.StateExited)
}

func testHostOutputs(t *testing.T, h Harness) {
	b := h.Backend(t)
	ho := capability[backend.HostOutputs](t, b, "HostOutputs")
	s := h.Shape(t, &job.Spec{ID: id("here"), Outputs: []string{"answer"}}, Proc{Outputs: map[string]string{"answer": "42"}})
	launch(t, b, s)
	waitState(t, b, s, job.StateExited)
	data, err := os.ReadFile(filepath.Join(ho.HostOutputDir(s.ID), "answer"))
	if err != nil || string(data) != "42" {
		t.Errorf("the output in HostOutputDir = %q, %v; want 42", data, err)
	}
}

func testNamed(t *testing.T, h Harness) {
	b := h.Backend(t)
	n := capability[backend.Named](t, b, "Named")
	if n.Name() == "" {
		t.Error("Name() is empty")
	}
	t.Logf("backend %s; images: %v; attempts shared across machines: %v", n.Name(),
		backend.Has[backend.Images](b), backend.Has[backend.SharedAttempts](b))
}
