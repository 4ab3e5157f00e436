package workflow

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/memtest"
)

// manyTasks is a Workflow of n one-line tasks: the cheapest YAML per
// task, so the most tasks a file of its size can hold.
func manyTasks(n int) string {
	var s strings.Builder
	s.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: many}\nspec:\n  tasks:\n")
	for i := range n {
		fmt.Fprintf(&s, "  - {name: t%d, command: [a]}\n", i)
	}
	return s.String()
}

// BenchmarkLoadTooManyTasks measures refusing a file of 105,000 tasks
// (just under 4 MiB, the largest file read): time, bytes allocated (B/op)
// and the peak of the live heap while it is refused (peak-MiB).
//
//	go test -run '^$' -bench LoadTooManyTasks -benchtime 3x ./internal/workflow
func BenchmarkLoadTooManyTasks(b *testing.B) {
	data := []byte(manyTasks(105_000))
	if len(data) > MaxFileSize {
		b.Fatalf("the file is %d bytes, over MaxFileSize", len(data))
	}
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := memtest.SamplePeak(&peak, before.HeapAlloc)
		_, err := LoadSubmission(&apiv1.Submission{Files: []apiv1.SourceFile{{Name: "many.yaml", Data: data}}}, nil)
		stop()
		var e *apiv1.Error
		if !errors.As(err, &e) || e.Code != apiv1.CodeOutOfRange {
			b.Fatalf("LoadSubmission = %v, want KLN-1023", err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
}

// BenchmarkLoadManyTasks measures loading a valid file of 100,000 tasks,
// read, checked and compiled as kiln run does: time, bytes allocated,
// the peak of the live heap while it loads (peak-MiB) and the heap the
// loaded plan keeps (kept-MiB).
//
//	go test -run '^$' -bench LoadManyTasks -benchtime 3x ./internal/workflow
func BenchmarkLoadManyTasks(b *testing.B) {
	data := []byte(manyTasks(100_000))
	b.ReportAllocs()
	var peak, kept uint64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := memtest.SamplePeak(&peak, before.HeapAlloc)
		l, err := LoadSubmission(&apiv1.Submission{Files: []apiv1.SourceFile{{Name: "many.yaml", Data: data}}}, nil)
		stop()
		if err != nil {
			b.Fatalf("LoadSubmission = %v", err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept = max(kept, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))
		runtime.KeepAlive(l)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(kept)/(1<<20), "kept-MiB")
}
