package sqlite

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// BenchmarkApply measures one reconcile round's write: a node, an attempt
// and an event, as one task's start or end writes them.
func BenchmarkApply(b *testing.B) { benchApply(b, false) }

// BenchmarkApplyWithProgress is BenchmarkApply as the engine writes a
// task's start or end now: with the run's status and its progress, which
// take the place of the lease check.
func BenchmarkApplyWithProgress(b *testing.B) { benchApply(b, true) }

func benchApply(b *testing.B, progress bool) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "kiln.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	nodes := make([]string, 1000)
	for i := range nodes {
		nodes[i] = fmt.Sprint("t", i)
	}
	now := time.Now()
	if err := s.CreateRun(b.Context(), store.CreateRunParams{
		Run:   apiv1.Run{ID: "r", Name: "r", Kind: "Workflow", CreatedAt: now},
		Nodes: nodes, Owner: "me", LeaseUntil: now.Add(time.Hour),
	}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		name := nodes[i%len(nodes)]
		c := &store.Change{
			Run: "r", Owner: "me",
			Nodes:    []apiv1.NodeStatus{{Name: name, Phase: apiv1.PhaseRunning, StartedAt: &now}},
			Attempts: []store.AttemptRow{{Node: name, AttemptStatus: apiv1.AttemptStatus{Number: i/len(nodes) + 1, ID: "x", Phase: apiv1.PhaseRunning, StartedAt: &now}}},
			Events:   []apiv1.Event{{Node: name, Phase: apiv1.PhaseRunning, Reason: "Started", Time: now}},
		}
		if progress {
			c.Status = &apiv1.RunStatus{Phase: apiv1.PhaseRunning, StartedAt: &now, Progress: &apiv1.RunProgress{Total: 1000, Done: i % 1000, Running: 1}}
		}
		if err := s.Apply(b.Context(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateRun measures storing a one-task run with a label, as a
// submission writes it.
func BenchmarkCreateRun(b *testing.B) { benchCreateRun(b, 1) }

// BenchmarkCreateRunParallel is BenchmarkCreateRun with 8 submits at a
// time, as a busy server stores them.
func BenchmarkCreateRunParallel(b *testing.B) { benchCreateRun(b, 8) }

func benchCreateRun(b *testing.B, parallel int) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "kiln.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	wf := &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "load"}}
	now := time.Now()
	b.ResetTimer()
	cpu := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op") }()
	var next atomic.Int64
	b.SetParallelism(max(1, parallel/runtime.GOMAXPROCS(0)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			run := apiv1.Run{
				ID: apiv1.RunID(fmt.Sprint("load-", i)), Name: "load", Kind: apiv1.KindWorkflow, Workflow: wf,
				CreatedAt: now.Add(time.Duration(i)), Labels: map[string]string{"team": "vision"},
			}
			if err := s.CreateRun(b.Context(), store.CreateRunParams{Run: run, Nodes: []string{"t"}, Owner: "me", LeaseUntil: now}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// cpuTime is the CPU time the process has used, user and system: unlike
// the wall time, it holds on a machine that others load.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
