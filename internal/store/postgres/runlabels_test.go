package postgres_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	_ "github.com/jackc/pgx/v5/stdlib"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/pgtest"
	"kiln.dev/kiln/internal/store/postgres"
	"kiln.dev/kiln/internal/store/storetest"
)

// TestMigrationIndexesTheLabelsAndCountsTheRunsStoredBefore stores runs,
// takes the database back to before 0014_run_labels.sql, and opens it
// again: the migration fills the labels' table from each run's labels (a
// run without labels holds none) and counts the runs by phase.
func TestMigrationIndexesTheLabelsAndCountsTheRunsStoredBefore(t *testing.T) {
	t.Parallel()
	dsn, key := pgtest.Shared(t).NewDatabase(t), filepath.Join(t.TempDir(), "secret.key")
	s, err := postgres.Open(t.Context(), dsn, postgres.Options{SecretKeyFile: key})
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
	beforeLabels(t, dsn)
	s, err = postgres.Open(t.Context(), dsn, postgres.Options{SecretKeyFile: key})
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

// beforeLabels takes the database at dsn back to before 0014_run_labels.sql.
func beforeLabels(t *testing.T, dsn string) {
	t.Helper()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	slices.Sort(files)
	at := slices.Index(files, "0014_run_labels.sql")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`DROP TRIGGER run_counts_insert_delete ON runs`, `DROP TRIGGER run_counts_update ON runs`, `DROP FUNCTION kiln_count_runs`,
		`DROP TABLE run_counts`, `DROP TABLE run_labels`, fmt.Sprintf(`UPDATE kiln_schema SET version = %d`, at),
	} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
