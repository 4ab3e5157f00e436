package sqlite

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/storetest"
)

// TestMigrationIndexesTheLabelsAndCountsTheRunsStoredBefore stores runs,
// takes the store back to before 0033_run_labels.sql, and opens it again:
// the migration fills the labels' table from each run's labels (a run
// without labels holds none) and counts the runs by phase.
func TestMigrationIndexesTheLabelsAndCountsTheRunsStoredBefore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, labels := range []map[string]string{{"team": "a"}, nil, {"team": "b", "gpu": "h100"}, {}} {
		p := storetest.NewRun(apiv1.RunID(fmt.Sprint("r", i)), "me")
		p.Run.Labels = labels
		if err := s.CreateRun(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Apply(t.Context(), &store.Change{Run: "r2", Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	beforeLabels(t, path)
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for sel, want := range map[string][]apiv1.RunID{"team": {"r2", "r0"}, "gpu=h100": {"r2"}, "!team": {"r3", "r1"}} {
		runs, err := s.ListRuns(t.Context(), store.ListRunsParams{Label: sel})
		if err != nil {
			t.Fatal(err)
		}
		var got []apiv1.RunID
		for _, r := range runs {
			got = append(got, r.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q after the migration (-want +got):\n%s", sel, diff)
		}
	}
	counts, err := s.CountRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[apiv1.Phase]int{apiv1.PhasePending: 3, apiv1.PhaseFailed: 1}, counts); diff != "" {
		t.Errorf("counts after the migration (-want +got):\n%s", diff)
	}
}

// beforeLabels takes the store at path back to before 0033_run_labels.sql.
func beforeLabels(t *testing.T, path string) {
	t.Helper()
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	at := slices.Index(files, "migrations/0033_run_labels.sql")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`DROP TRIGGER run_counts_insert`, `DROP TRIGGER run_counts_delete`, `DROP TRIGGER run_counts_update`,
		`DROP TABLE run_counts`, `DROP TABLE run_labels`, fmt.Sprintf(`PRAGMA user_version = %d`, at),
	} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
