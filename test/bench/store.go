package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/pgtest"
	"kiln.dev/kiln/internal/store/postgres"
	"kiln.dev/kiln/internal/store/sqlite"
)

// storeWorkers is how many goroutines submit or list at once.
const storeWorkers = 8

// stores measures the two stores side by side, each holding seededRuns
// runs: submits (a one-task run, as kiln submit writes it) and pages of
// 50 runs, 8 at a time, straight on the store. PostgreSQL runs from
// Debian's package in a scratch directory with its durable defaults
// (fsync, synchronous commit); SQLite as kiln opens it. The targets are
// PostgreSQL's, with room for a shared machine: a fsync per commit bounds
// its submits where SQLite's WAL (synchronous=NORMAL) does not sync.
func (b *bench) stores() []row {
	pg, err := pgtest.New(pgtest.Options{Durable: true})
	if err != nil {
		return []row{{name: "PostgreSQL store", kiln: err.Error(), target: "PostgreSQL installed (make deps)"}}
	}
	defer pg.Stop()
	dsn, err := pg.CreateDatabase(context.Background())
	must(err)
	key := filepath.Join(b.dir, "pg-secret.key")
	seedStore(func() store.Store { // seeding needs no durability: synchronous_commit off for its connections
		s, err := postgres.Open(context.Background(), dsn+"&synchronous_commit=off", postgres.Options{SecretKeyFile: key})
		must(err)
		return s
	}, seededRuns)
	ps, err := postgres.Open(context.Background(), dsn, postgres.Options{SecretKeyFile: key})
	must(err)
	defer ps.Close()
	home := filepath.Join(b.dir, "store-home")
	must(os.MkdirAll(home, 0o755))
	seed(home, seededRuns)
	ss, err := sqlite.Open(context.Background(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	must(err)
	defer ss.Close()

	pgList, sqList := listP99(ps), listP99(ss)
	pgSubmit, sqSubmit := submitRate(ps), submitRate(ss)
	return []row{
		{
			name: fmt.Sprintf("store: list a page of 50 of %d runs, %d at a time: PostgreSQL (raw: SQLite)", seededRuns, storeWorkers),
			kiln: pgList.String() + " p99", raw: sqList.String() + " p99", ratio: ratio(pgList, sqList),
			target: "p99 < 50ms", met: pgList < 50*time.Millisecond,
		},
		{
			name: fmt.Sprintf("store: submit a run beside %d, %d at a time: PostgreSQL (raw: SQLite)", seededRuns, storeWorkers),
			kiln: fmt.Sprintf("%.0f/s", pgSubmit), raw: fmt.Sprintf("%.0f/s", sqSubmit), ratio: fmt.Sprintf("%.2fx", pgSubmit/sqSubmit),
			target: ">= 250/s", met: pgSubmit >= 250,
		},
	}
}

// seedStore writes n finished runs with a store from open, 8 at a time.
func seedStore(open func() store.Store, n int) {
	s := open()
	defer s.Close()
	start := time.Now().Add(-24 * time.Hour)
	wf := &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "seeded"}}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range storeWorkers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				run := apiv1.Run{
					ID: apiv1.RunID(fmt.Sprintf("seeded-%06d", i)), Name: "seeded", Kind: apiv1.KindWorkflow, Workflow: wf,
					CreatedAt: start.Add(time.Duration(i) * time.Second), Status: apiv1.RunStatus{Phase: apiv1.PhaseSucceeded},
				}
				must(s.CreateRun(context.Background(), store.CreateRunParams{Run: run, Nodes: []string{"t"}}))
			}
		})
	}
	wg.Wait()
}

// listP99 is the p99 of reading the newest page of 50 runs, 8 at a time
// for 5 seconds.
func listP99(s store.Store) time.Duration {
	var mu sync.Mutex
	var took []time.Duration
	until := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for range storeWorkers {
		wg.Go(func() {
			for time.Now().Before(until) {
				t := time.Now()
				runs, err := s.ListRuns(context.Background(), store.ListRunsParams{Limit: 50})
				must(err)
				if len(runs) != 50 {
					panic(fmt.Sprintf("a page of %d runs, want 50", len(runs)))
				}
				mu.Lock()
				took = append(took, time.Since(t))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(took)
	return took[len(took)*99/100].Round(10 * time.Microsecond)
}

// submitRate is how many one-task runs s creates per second, 8 at a time
// for 5 seconds.
func submitRate(s store.Store) float64 {
	var n atomic.Int64
	start := time.Now()
	until := start.Add(5 * time.Second)
	wf := &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "load"}}
	var wg sync.WaitGroup
	for w := range storeWorkers {
		wg.Go(func() {
			for i := 0; time.Now().Before(until); i++ {
				run := apiv1.Run{
					ID: apiv1.RunID(fmt.Sprintf("load-%d-%d", w, i)), Name: "load", Kind: apiv1.KindWorkflow, Workflow: wf,
					CreatedAt: time.Now(), Status: apiv1.RunStatus{Phase: apiv1.PhasePending},
				}
				must(s.CreateRun(context.Background(), store.CreateRunParams{Run: run, Nodes: []string{"t"}, Owner: "bench", LeaseUntil: until}))
				n.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}
