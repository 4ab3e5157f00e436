package sqlite

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/storetest"
)

// TestMigrationCountsTheProgressOfRunsStoredBefore stores a run, takes
// the store back to before the progress migration, and opens it again:
// the migration counts the run's nodes as the engine would.
func TestMigrationCountsTheProgressOfRunsStoredBefore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := storetest.NewRun("r1", "me")
	p.Nodes = []string{"a", "m", "m.0", "m.1", "b"}
	if err := s.CreateRun(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := s.Apply(t.Context(), &store.Change{Run: "r1", Owner: "me", Nodes: []apiv1.NodeStatus{
		{Name: "a", Phase: apiv1.PhaseSucceeded, FinishedAt: &now},
		{Name: "m", Phase: apiv1.PhaseRunning, Children: &apiv1.ChildCounts{Total: 2}},
		{Name: "m.0", Phase: apiv1.PhaseFailed},
		{Name: "m.1", Phase: apiv1.PhaseRunning},
	}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	unmigrate(t, path)
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run, err := s.GetRun(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := &apiv1.RunProgress{Total: 4, Done: 2, Succeeded: 1, Failed: 1, Running: 1}
	if diff := cmp.Diff(want, run.Status.Progress); diff != "" {
		t.Errorf("progress after the migration (-want +got):\n%s", diff)
	}
}

// unmigrate takes the store at path back to before 0015_progress.sql,
// the last migration when it was written.
func unmigrate(t *testing.T, path string) {
	t.Helper()
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	at := slices.Index(files, "migrations/0015_progress.sql")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`DROP TABLE node_trainer_status`, `ALTER TABLE runs DROP COLUMN progress`,
		`ALTER TABLE attempts DROP COLUMN nodes`, `ALTER TABLE attempts DROP COLUMN joined`, `ALTER TABLE attempts DROP COLUMN dropped`, // 0018, applied again
		`DROP TABLE run_federation`, `DROP TABLE node_party_shares`, `DROP TABLE share_orders`, // 0020
		`DROP TABLE leadership`, `ALTER TABLE runs DROP COLUMN lease_term`, `ALTER TABLE events DROP COLUMN term`, // 0021
		`DROP TABLE schedules`,                                                                                                                                               // 0022
		`DROP TABLE project_quotas`,                                                                                                                                          // 0023
		`DROP TABLE node_artifacts`,                                                                                                                                          // 0025
		`ALTER TABLE runs DROP COLUMN suspension`,                                                                                                                            // 0026
		`DROP TABLE channel_messages`, `DROP TABLE channel_chunks`, `DROP TABLE part_heard`, `ALTER TABLE parties DROP COLUMN policy`, `ALTER TABLE parties DROP COLUMN pin`, // 0027 (share_orders.code went with its table)
		`DROP TABLE submit_keys`,                                                                                             // 0029
		`ALTER TABLE attempts DROP COLUMN logs_lost`,                                                                         // 0028
		`DROP TABLE node_inputs`,                                                                                             // 0030
		`DROP INDEX nodes_by_position`, `ALTER TABLE runs DROP COLUMN node_version`, `ALTER TABLE nodes DROP COLUMN version`, // 0031
		fmt.Sprintf(`PRAGMA user_version = %d`, at),
	} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
