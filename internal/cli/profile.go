package cli

import (
	"bytes"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// memProfileEnv names the file a heap profile is written to when kiln
// ends, with a dot and the command's name added (PATH.run, and
// PATH.supervise for the supervisor a run starts, which inherits it): the
// profile taken when the live heap was at its highest.
const memProfileEnv = "KILN_MEMPROFILE"

// startProfiles starts a CPU profile into cpu, if set, and the sampling
// of the heap for KILN_MEMPROFILE, if set, and returns the function that
// ends both and writes them; it is safe to call more than once. command
// names the heap profile's file.
func startProfiles(cpu, command string) (func(), error) {
	stopCPU, err := startProfile(cpu)
	if err != nil {
		return nil, err
	}
	stopHeap := func() {}
	if path := os.Getenv(memProfileEnv); path != "" {
		stopHeap = samplePeakHeap(path + "." + command)
	}
	done := false
	return func() {
		if !done {
			done = true
			stopCPU()
			stopHeap()
		}
	}, nil
}

// startProfile starts a CPU profile into path, if set, and returns the
// function that ends it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// samplePeakHeap reads the live heap every 10 ms and takes a heap profile
// each time it grows a tenth above the last one taken; the function it
// returns stops sampling and writes the last profile taken to path (the
// heap at its peak, as of the garbage collection before it).
func samplePeakHeap(path string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	var best bytes.Buffer
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var taken uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > taken+taken/10 {
				taken = live
				best.Reset()
				_ = pprof.Lookup("heap").WriteTo(&best, 0)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		_ = os.WriteFile(path, best.Bytes(), 0o644)
	}
}
