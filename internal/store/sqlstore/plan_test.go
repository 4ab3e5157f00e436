package sqlstore_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
	"kiln.dev/kiln/internal/store/storetest"
)

// Every label selector form the runs list takes is read through an index:
// SQLite's plan never scans runs or run_labels whole, and a selector that
// asks for a label (=, in, exists) is read from run_labels' indices in the
// list's order, without sorting what it reads (but the pages of several
// values, merged).
func TestLabelSelectorsReadIndices(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 50 {
		p := storetest.NewRun(apiv1.RunID(fmt.Sprint("r", i)), "me")
		p.Run.CreatedAt = p.Run.CreatedAt.Add(time.Duration(i) * time.Second)
		p.Run.Labels = map[string]string{"team": []string{"a", "b"}[i%2]}
		if err := s.CreateRun(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after := &store.Cursor{CreatedAt: time.Now(), ID: "r9"}
	for sel, lead := range map[string]string{
		"team=a": "run_labels_by_value", "team==a": "run_labels_by_value", "team in (a)": "run_labels_by_value",
		"team in (a,b)": "run_labels_by_value", "team": "run_labels_by_key", "team,gpu=x": "run_labels_by_value",
		"team,!gpu": "run_labels_by_key", "team!=a": "", "team notin (a,b)": "", "!team": "", "!team,gpu!=x": "", "": "",
	} {
		for name, p := range map[string]store.ListRunsParams{
			"alone":        {Label: sel},
			"with phases":  {Label: sel, Phases: []apiv1.Phase{apiv1.PhaseFailed, apiv1.PhaseCancelled}, Search: "x"},
			"a later page": {Label: sel, After: after, Since: time.Now().Add(-time.Hour), Ascending: true},
		} {
			plan := explain(t, s.Store, db, p)
			for _, line := range plan {
				if strings.HasPrefix(line, "SCAN") && line != "SCAN v" && !strings.Contains(line, "INDEX") { // v: a page of one value
					t.Errorf("%q %s: the plan scans a table:\n%s", sel, name, strings.Join(plan, "\n"))
				}
			}
			joined := strings.Join(plan, "\n")
			if lead != "" && !strings.Contains(joined, "INDEX "+lead) {
				t.Errorf("%q %s: the plan does not read %s:\n%s", sel, name, lead, joined)
			}
			if lead == "" && name == "with phases" && !strings.Contains(joined, "INDEX runs_by_phase_name (phase=?)") {
				t.Errorf("%q %s: the plan does not read the phases from runs_by_phase_name:\n%s", sel, name, joined)
			}
			if lead != "" && sel != "team in (a,b)" && strings.Contains(joined, "TEMP B-TREE") {
				t.Errorf("%q %s: the plan sorts what it reads:\n%s", sel, name, joined)
			}
		}
	}
}

// lister is what explain needs of a store.
type lister interface {
	ListQuery(store.ListRunsParams) (string, []any, error)
}

// explain is SQLite's plan of the runs list p asks for, a line a step.
func explain(t *testing.T, s lister, db *sql.DB, p store.ListRunsParams) []string {
	t.Helper()
	query, args, err := s.ListQuery(p)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
