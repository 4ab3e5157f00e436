package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the test reads the store's events

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store/pgtest"
)

// chaosFigures are how hard TestReplicasChaos is: make test runs the
// defaults, make chaos the full figures (KILN_CHAOS_RUNS=200,
// KILN_CHAOS_KILLS=50, KILN_CHAOS_STOPS=3).
type chaosFigures struct{ runs, kills, stops int }

func chaosFromEnv() chaosFigures {
	f := chaosFigures{runs: 30, kills: 4, stops: 1}
	for _, v := range []struct {
		name string
		dst  *int
	}{{"KILN_CHAOS_RUNS", &f.runs}, {"KILN_CHAOS_KILLS", &f.kills}, {"KILN_CHAOS_STOPS", &f.stops}} {
		if n, err := strconv.Atoi(os.Getenv(v.name)); err == nil && n >= 0 {
			*v.dst = n
		}
	}
	return f
}

// chainWorkflow is a run of n tasks one after another, each writing its
// run, task and attempt to the ledger, then sleeping a while.
func chainWorkflow(n int, ledger string) string {
	var b strings.Builder
	b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata:\n  name: chain\nspec:\n  tasks:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: t%d\n    resources: {cpu: 10m, memory: 16Mi}\n", i)
		if i > 0 {
			fmt.Fprintf(&b, "    dependsOn: [t%d]\n", i-1)
		}
		fmt.Fprintf(&b, "    command: [/bin/bash, -c, 'echo \"$KILN_RUN_ID $KILN_TASK $KILN_ATTEMPT\" >> %s; sleep 1.$((RANDOM %% 9))']\n", ledger)
	}
	return b.String()
}

// TestReplicasChaos runs three replicas on one PostgreSQL with runs in
// flight, kills the leader with SIGKILL at random moments and pauses it
// past its lease with SIGSTOP, and checks that no run is lost, no task
// runs twice, and the paused leader, woken, writes nothing and stops.
func TestReplicasChaos(t *testing.T) {
	t.Parallel()
	f := chaosFromEnv()
	dsn := pgtest.Start(t).NewDatabase(t)
	rs := startReplicas(t, dsn, 3, replicaOptions{})
	ledgerDir := t.TempDir()
	if err := os.Chmod(ledgerDir, 0o777); err != nil {
		t.Fatal(err)
	}
	ledger := filepath.Join(ledgerDir, "ledger")
	// Each run lasts about as long as the chaos: every kill takes a few
	// seconds, every pause about the lease.
	tasks := 4 + f.kills*3/2 + f.stops*8
	wf := chainWorkflow(tasks, ledger)
	_, term := rs.leader(t, 0)

	ids := submitAll(t, rs, wf, f.runs)
	var takeovers []time.Duration
	for k := range f.kills {
		pause(t, time.Duration(500+rand.IntN(2500))*time.Millisecond)
		lead, _ := rs.leader(t, 0)
		killed := time.Now()
		lead.kill9()
		_, next := rs.leader(t, term)
		takeovers = append(takeovers, time.Since(killed))
		term = next
		rs.start(t, lead)
		t.Logf("kill %d: term %d took over in %s", k+1, term, takeovers[len(takeovers)-1])
	}
	stale := 0
	for range f.stops {
		lead, _ := rs.leader(t, 0)
		old := term
		stopped := time.Now()
		if err := lead.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		lead.paused = true
		_, term = rs.leader(t, old)
		takeovers = append(takeovers, time.Since(stopped))
		t.Logf("pause: term %d took over in %s", term, takeovers[len(takeovers)-1])
		if err := lead.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		lead.paused = false
		select {
		case <-lead.exited:
		case <-time.After(30 * time.Second):
			t.Fatalf("the leader of term %d, paused past its lease and woken, did not stop", old)
		}
		if !strings.Contains(lead.errors(), "KLN-5051") {
			t.Errorf("the woken stale leader exited (%v) without saying KLN-5051: %s", lead.waited, lead.errors())
		}
		stale += staleWrites(t, dsn, old)
		rs.start(t, lead)
	}
	waitAllDone(t, rs, ids, time.Duration(tasks)*3*time.Second+2*time.Minute)
	checkLedger(t, ledger, ids, tasks)
	if stale > 0 {
		t.Errorf("%d writes from a stale leader were accepted, want 0", stale)
	}
	slices.Sort(takeovers)
	if len(takeovers) > 0 {
		p := func(q float64) time.Duration { return takeovers[min(len(takeovers)-1, int(q*float64(len(takeovers))))] }
		msg := fmt.Sprintf("chaos: %d runs of %d tasks, %d kills, %d pauses: 0 runs lost, 0 tasks twice, %d stale writes; takeover p50 %s p99 %s max %s",
			len(ids), tasks, f.kills, f.stops, stale, p(0.5), p(0.99), takeovers[len(takeovers)-1])
		t.Log(msg)
		if os.Getenv("KILN_CHAOS_REPORT") != "" {
			_ = os.WriteFile(os.Getenv("KILN_CHAOS_REPORT"), []byte(msg+"\n"), 0o644)
		}
	}
}

// submitAll submits n runs of wf, spread over the replicas.
func submitAll(t *testing.T, rs *replicaSet, wf string, n int) []apiv1.RunID {
	t.Helper()
	ids := make([]apiv1.RunID, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			run, err := rs.any(i).Submit(t.Context(), apiv1.Submission{Files: []apiv1.SourceFile{{Name: "chain.yaml", Data: []byte(wf)}}})
			if err != nil {
				t.Errorf("submit %d: %v", i, err)
				return
			}
			ids[i] = run.ID
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return ids
}

// waitAllDone waits for every run to end, asking any live replica, and
// fails for each that did not succeed.
func waitAllDone(t *testing.T, rs *replicaSet, ids []apiv1.RunID, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	left := slices.Clone(ids)
	for len(left) > 0 && time.Now().Before(deadline) {
		var still []apiv1.RunID
		for i, id := range left {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			run, err := rs.any(i).GetRun(ctx, id)
			cancel()
			switch {
			case err != nil || !run.Status.Phase.Done():
				still = append(still, id)
			case run.Status.Phase != apiv1.PhaseSucceeded:
				t.Errorf("run %s ended %s: %s %s", id, run.Status.Phase, run.Status.Code, run.Status.Message)
			}
		}
		left = still
		if len(left) > 0 {
			pause(t, time.Second)
		}
	}
	if len(left) > 0 {
		t.Fatalf("%d runs were lost: not ended within %s: %v", len(left), within, left)
	}
}

// checkLedger checks that every task of every run ran exactly once.
func checkLedger(t *testing.T, ledger string, ids []apiv1.RunID, tasks int) {
	t.Helper()
	data, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 3 {
			ran[f[0]+"/"+f[1]]++
		}
	}
	for _, id := range ids {
		for i := range tasks {
			if n := ran[fmt.Sprintf("%s/t%d", id, i)]; n != 1 {
				t.Errorf("task t%d of run %s ran %d times, want once", i, id, n)
			}
		}
	}
}

// staleWrites counts the events written under term old after the first
// event of a later term: writes a stale leader made and the store took.
func staleWrites(t *testing.T, dsn string, old int64) int {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRowContext(t.Context(), `SELECT count(*) FROM events WHERE term = $1
		AND seq > (SELECT MIN(seq) FROM events WHERE term > $1)`, old).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
