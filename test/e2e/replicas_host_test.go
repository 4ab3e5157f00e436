package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
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
	out := r.output(t, "warning: the leader before this one ran on host elsewhere", time.Minute) // a bound, not a timing: under load it came after 10 s
	if !strings.Contains(out, "run again") || term != 2 {
		t.Fatalf("term %d; kiln serve said:\n%s", term, out)
	}
}

// TestAReplicaHomeRefusesCommandsWithoutTheStore: a command on the home
// of PostgreSQL replicas that forgot KILN_STORE is refused, naming the
// store, and neither makes a SQLite store there nor replaces the admin
// token the replicas' users hold.
func TestAReplicaHomeRefusesCommandsWithoutTheStore(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Start(t).NewDatabase(t)
	rs := startReplicas(t, dsn, 1, replicaOptions{})
	home := rs.replicas[0].home
	token, err := os.ReadFile(filepath.Join(home, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KILN_STORE=") })
	for _, args := range [][]string{{"token", "list"}, {"serve", "--addr", "127.0.0.1:0"}} {
		r := kilnWithEnv(t, env, home, args...)
		if r.code == 0 || !strings.Contains(r.stderr, "KLN-5053") || !strings.Contains(r.stderr, "postgres://") {
			t.Errorf("kiln %v on the replicas' home without KILN_STORE: exit %d, %s", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "kiln.db")); !os.IsNotExist(err) {
		t.Errorf("a refused command made kiln.db in the replicas' home: %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(home, "admin.token")); string(now) != string(token) {
		t.Error("a refused command replaced the replicas' admin token")
	}
	r := kilnWithEnv(t, append(env, "KILN_STORE="+dsn), home, "token", "list")
	if r.code != 0 {
		t.Errorf("kiln token list with the replicas' store: exit %d, %s", r.code, r.stderr)
	}
}
