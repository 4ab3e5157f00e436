package controller

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/store"
)

// maxConcurrent reads a log of "start"/"end" lines and returns how many
// tasks ran at once at most.
func maxConcurrent(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	running, most := 0, 0
	for _, line := range strings.Fields(string(b)) {
		if line == "start" {
			running++
		} else {
			running--
		}
		most = max(most, running)
	}
	return most
}

// Two engines on one home (two kiln run in two terminals, or kiln serve
// and kiln run) admit against the same pool.
func TestTwoEnginesOnOneHomeNeverOversubscribe(t *testing.T) {
	t.Parallel()
	a := newEngine(t, 2)
	b := a.sibling(t, 2, "second-engine")
	log := filepath.Join(t.TempDir(), "log")
	spec := "spec:\n  tasks:\n"
	for _, name := range []string{"a", "b", "c", "d"} {
		spec += `  - {name: ` + name + `, command: [sh, -c, 'echo start >> ` + log + `; sleep 0.1; echo end >> ` + log + `']}` + "\n"
	}
	ids := []apiv1.RunID{a.submit(t, spec, nil), b.submit(t, spec, nil)}
	for i, e := range []*engine{a, b} {
		if run := e.wait(t, ids[i]); run.Status.Phase != apiv1.PhaseSucceeded {
			t.Fatalf("run %s: %s %s", ids[i], run.Status.Phase, run.Status.Message)
		}
	}
	if most := maxConcurrent(t, log); most != 2 {
		t.Errorf("at most %d one-CPU tasks of two engines ran at once on a machine of 2 CPUs, want 2", most)
	}
}

// Priority orders the nodes of one run as it orders runs.
func TestPriorityOrdersTasksInsideOneRun(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	id := e.submit(t, `spec:
  tasks:
  - {name: first, command: [sh, -c, 'while [ ! -e `+dir+`/go ]; do sleep 0.01; done']}
  - {name: low, dependsOn: [], command: [sh, -c, 'echo low >> `+log+`']}
  - {name: mid, command: [sh, -c, 'echo mid >> `+log+`'], priority: 1}
  - {name: high, command: [sh, -c, 'echo high >> `+log+`'], priority: 5}
`, nil)
	e.waitPhase(t, id, "low", apiv1.PhaseWaiting)
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if run := e.wait(t, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
	}
	b, _ := os.ReadFile(log)
	if got := strings.Fields(string(b)); !slices.Equal(got, []string{"high", "mid", "low"}) {
		t.Errorf("tasks started in the order %v, want high, mid, low", got)
	}
}

// Every node that waits for room says why, not only the first.
func TestEveryWaitingNodeShowsWhy(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	dir := t.TempDir()
	spec := "spec:\n  tasks:\n"
	names := []string{"a", "b", "c", "d", "e"}
	for _, name := range names {
		spec += `  - {name: ` + name + `, command: [sh, -c, 'while [ ! -e ` + dir + `/go ]; do sleep 0.01; done']}` + "\n"
	}
	id := e.submit(t, spec, nil)
	e.waitPhase(t, id, "a", apiv1.PhaseRunning)
	run, err := e.store.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range run.Status.Nodes[1:] {
		if n.Phase != apiv1.PhaseWaiting || !strings.Contains(n.Message, "waiting for resources: needs cpu 1") {
			t.Errorf("node %s = %s %q, want Waiting with its reason", n.Name, n.Phase, n.Message)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if run := e.wait(t, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
	}
	events, err := e.store.ListEvents(t.Context(), store.ListEventsParams{Run: id})
	if err != nil {
		t.Fatal(err)
	}
	waited := map[string]bool{}
	for _, ev := range events {
		if ev.Reason == "WaitingForResources" {
			waited[ev.Node] = true
		}
	}
	if len(waited) != 4 {
		t.Errorf("%d nodes recorded why they waited (%v), want the 4 that did", len(waited), waited)
	}
}

// A plain task, not only a gang, may bound its wait for room.
func TestTaskAdmissionTimeout(t *testing.T) {
	t.Parallel()
	e := newEngine(t, 1)
	dir := t.TempDir()
	id := e.submit(t, `spec:
  failFast: false
  tasks:
  - {name: hog, command: [sh, -c, 'while [ ! -e `+dir+`/go ]; do sleep 0.01; done']}
  - {name: impatient, command: ["true"], admissionTimeout: 300ms}
`, nil)
	late := e.waitPhase(t, id, "impatient", apiv1.PhaseFailed)
	if late.Code != apiv1.CodeScheduleTimeout || !strings.Contains(late.Message, "admission timeout of 300ms") {
		t.Errorf("impatient = %s %q, want %s naming its timeout", late.Code, late.Message, apiv1.CodeScheduleTimeout)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := e.wait(t, id)
	if n := nodeOf(run, "impatient"); len(n.Attempts) != 0 {
		t.Errorf("a task never admitted has %d attempts", len(n.Attempts))
	}
	if nodeOf(run, "hog").Phase != apiv1.PhaseSucceeded {
		t.Errorf("hog = %s, want Succeeded", nodeOf(run, "hog").Phase)
	}
}

// countingPool counts the calls an engine makes to its pool.
type countingPool struct {
	Pool
	admits, handOvers atomic.Int32
}

func (p *countingPool) Admit(ctx context.Context, release []string, claims []resource.Claim) ([]resource.Admission, error) {
	p.admits.Add(1)
	return p.Pool.Admit(ctx, release, claims)
}

func (p *countingPool) HandOver(ctx context.Context, c resource.Claim, release []string) (bool, error) {
	handed, err := p.Pool.HandOver(ctx, c, release)
	if handed {
		p.handOvers.Add(1)
	}
	return handed, err
}

// A run alone on the machine hands the room of each ended task straight
// to the next, asking the shared pool only once.
func TestARunAloneHandsRoomOver(t *testing.T) {
	t.Parallel()
	pool := &countingPool{}
	e := newEngine(t, 1, func(cfg *Config) { pool.Pool = cfg.Pool; cfg.Pool = pool })
	id := e.submit(t, `spec:
  tasks:
  - {name: a, command: ["true"]}
  - {name: b, command: ["true"], dependsOn: [a]}
  - {name: c, command: ["true"], dependsOn: [b]}
  - {name: d, command: ["true"], dependsOn: [c]}
`, nil)
	if run := e.wait(t, id); run.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("run %s: %s", run.Status.Phase, run.Status.Message)
	}
	if a, h := pool.admits.Load(), pool.handOvers.Load(); a != 1 || h != 3 {
		t.Errorf("a chain of 4 alone asked the pool %d times and handed room over %d times, want 1 and 3", a, h)
	}
}

// A node of another engine that outranks a run's next node starts first:
// the run learns it waits and asks the pool instead of handing its room
// over.
func TestAnotherEnginesHigherPriorityIsNotPassed(t *testing.T) {
	t.Parallel()
	a := newEngine(t, 1)
	b := a.sibling(t, 1, "second-engine")
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	idA := holdThenNext(t, a, dir, log)
	idB := b.submit(t, `spec:
  tasks:
  - {name: urgent, command: [sh, -c, 'echo urgent >> `+log+`'], priority: 9}
`, nil)
	b.waitPhase(t, idB, "urgent", apiv1.PhaseWaiting)
	for deadline := time.Now().Add(10 * time.Second); !a.pool.Contended(); {
		if time.Now().After(deadline) {
			t.Fatal("the first engine never learned that another engine waits")
		}
		<-time.After(5 * time.Millisecond)
	}
	if order := releaseAndOrder(t, dir, log, a, idA, b, idB); !slices.Equal(order, []string{"urgent", "next"}) {
		t.Errorf("tasks started in the order %v, want urgent (priority 9, another engine) before next", order)
	}
}

// Room a task gives back goes to the task that waited first, of another
// run or another engine, not to the next task of the run that gave it.
func TestRoomGoesToTheTaskThatWaitedFirst(t *testing.T) {
	t.Parallel()
	for name, other := range map[string]func(e *engine, t *testing.T) *engine{
		"another run of the engine": func(e *engine, _ *testing.T) *engine { return e },
		"another engine":            func(e *engine, t *testing.T) *engine { return e.sibling(t, 1, "second-engine") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := newEngine(t, 1)
			b := other(a, t)
			dir := t.TempDir()
			log := filepath.Join(dir, "log")
			idA := holdThenNext(t, a, dir, log)
			idB := b.submit(t, `spec:
  tasks:
  - {name: waited, command: [sh, -c, 'echo waited >> `+log+`']}
`, nil)
			b.waitPhase(t, idB, "waited", apiv1.PhaseWaiting)
			if order := releaseAndOrder(t, dir, log, a, idA, b, idB); !slices.Equal(order, []string{"waited", "next"}) {
				t.Errorf("tasks started in the order %v, want waited (it waited first) before next", order)
			}
		})
	}
}

// holdThenNext submits to e a run whose task first holds the room until
// dir/go exists and whose task next then writes "next" to log, and waits
// until first runs.
func holdThenNext(t *testing.T, e *engine, dir, log string) apiv1.RunID {
	t.Helper()
	id := e.submit(t, `spec:
  tasks:
  - {name: first, command: [sh, -c, 'while [ ! -e `+dir+`/go ]; do sleep 0.01; done']}
  - {name: next, command: [sh, -c, 'echo next >> `+log+`'], dependsOn: [first]}
`, nil)
	e.waitPhase(t, id, "first", apiv1.PhaseRunning)
	return id
}

// releaseAndOrder lets the task waiting for dir/go end, waits for run idA
// of a and idB of b to succeed, and returns the order of the lines the
// tasks wrote to log.
func releaseAndOrder(t *testing.T, dir, log string, a *engine, idA apiv1.RunID, b *engine, idB apiv1.RunID) []string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, e := range []*engine{a, b} {
		if run := e.wait(t, []apiv1.RunID{idA, idB}[i]); run.Status.Phase != apiv1.PhaseSucceeded {
			t.Fatalf("run %s: %s %s", run.ID, run.Status.Phase, run.Status.Message)
		}
	}
	got, _ := os.ReadFile(log)
	return strings.Fields(string(got))
}
