package local

import (
	"context"
	"os"
	"testing"
	"time"

	"kiln.dev/kiln/internal/job"
)

// BenchmarkLaunchToExit measures one `true` attempt from Launch to the
// exit notification and the Observe that follows, one at a time.
func BenchmarkLaunchToExit(b *testing.B) {
	home := b.TempDir()
	be := New(Config{Home: home, SupervisorCommand: []string{"/usr/bin/env", "KILN_TEST_SUPERVISOR_HOME=" + home, os.Args[0]}})
	defer be.Close()
	exits := make(chan job.AttemptID, 16)
	synced := make(chan struct{}, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go be.Watch(ctx, func(id job.AttemptID, _ job.Status) { exits <- id }, func() { synced <- struct{}{} })
	<-synced
	env := os.Environ()
	b.ResetTimer()
	var launch, wait time.Duration
	for i := range b.N {
		spec := &job.Spec{ID: job.AttemptID{Run: "r", Node: "t", Number: i + 1}, Processes: []job.Process{{Command: []string{"true"}, Env: env}}}
		t0 := time.Now()
		if err := be.Launch(ctx, spec); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		<-exits
		if _, err := be.Observe(ctx, spec); err != nil {
			b.Fatal(err)
		}
		launch += t1.Sub(t0)
		wait += time.Since(t1)
	}
	b.ReportMetric(float64(launch.Microseconds())/float64(b.N), "launch-us")
	b.ReportMetric(float64(wait.Microseconds())/float64(b.N), "exit+observe-us")
}
