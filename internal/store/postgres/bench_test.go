package postgres_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/pgtest"
	"kiln.dev/kiln/internal/store/postgres"
)

// BenchmarkCreateRunParallel measures submits of one-task runs, 8 at a
// time, on a server with PostgreSQL's durable defaults (a fsync per
// commit), as the store benchmark runs them.
func BenchmarkCreateRunParallel(b *testing.B) {
	srv := pgtest.StartWith(b, pgtest.Options{Durable: true})
	s, err := postgres.Open(b.Context(), srv.NewDatabase(b), postgres.Options{SecretKeyFile: filepath.Join(b.TempDir(), "secret.key")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	wf := &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "load"}}
	now := time.Now()
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
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
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}
