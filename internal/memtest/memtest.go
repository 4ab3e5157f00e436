// Package memtest measures, for tests and benchmarks, how far the live
// heap grows while something runs.
package memtest

import (
	"runtime"
	"time"
)

// SamplePeak records in peak, until stop is called, the most the live
// heap grew above base, sampling it every millisecond.
func SamplePeak(peak *uint64, base uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > *peak {
				*peak = m.HeapAlloc - base
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}
