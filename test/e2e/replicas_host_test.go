package e2e

import (
	"database/sql"
	"strings"
	"syscall"
	"testing"
	"time"

	"kiln.dev/kiln/internal/store/pgtest"
)

// TestLeaderWarnsWhenLocalTasksRanOnAnotherHost: a replica that takes over
// from a leader of another machine says that the local tasks started there
// cannot be adopted from here.
func TestLeaderWarnsWhenLocalTasksRanOnAnotherHost(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t).NewDatabase(t)
	rs := startReplicas(t, dsn, 1, replicaOptions{})
	r := rs.replicas[0]
	rs.leader(t, 0)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-r.exited
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), `UPDATE leadership SET holder = 'elsewhere:1:1', until = 0`); err != nil {
		t.Fatal(err)
	}
	rs.start(t, r)
	_, term := rs.leader(t, 1)
	out := r.output(t, "warning: the leader before this one ran on host elsewhere", 10*time.Second)
	if !strings.Contains(out, "run again") || term != 2 {
		t.Fatalf("term %d; kiln serve said:\n%s", term, out)
	}
}
