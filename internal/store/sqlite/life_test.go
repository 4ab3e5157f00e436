package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/storetest"
)

// Every table with a run_id column, those of later migrations too, holds
// no row of a deleted run; cached results (cache_* tables) outlive runs.
func TestDeleteRunEmptiesEveryTableOfTheRun(t *testing.T) {
	t.Parallel()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	for _, id := range []apiv1.RunID{"gone", "kept"} {
		p := storetest.NewRun(id, "me") // a rerun, so that it has preset nodes
		p.Run.Labels = map[string]string{"team": "ml"}
		p.Preset = []apiv1.NodeStatus{{Name: "b", Phase: apiv1.PhaseSucceeded, Reused: &apiv1.Reused{Run: "src", Node: "b", Attempt: 1}}}
		p.Run.Federation = &apiv1.FederationInfo{Initiator: "x", Party: "y", Run: "f", Part: true}
		p.Key = &store.NewSubmitKey{Key: "key-" + string(id), Digest: "d"}
		if err := s.CreateRun(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := s.PutShareOrder(ctx, id, "a", store.ShareOrderRow{ShareOrder: apiv1.ShareOrder{Attempt: 1, Action: apiv1.OrderStart}}); err != nil {
			t.Fatal(err)
		}
		if err := s.AddGateInput(ctx, id, "a", apiv1.GateInput{Reason: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := s.HeardFromInitiator(ctx, id, time.Now()); err != nil {
			t.Fatal(err)
		}
		key := store.ChannelKey{Task: "a", Attempt: 1, Role: "host", Party: "x", PeerRole: "guest", Name: "m"}
		if _, err := s.PutChunk(ctx, id, store.ChannelChunk{Key: key, Chunks: 2, Size: 2, Digest: "sha256:00", Data: []byte("a")}); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, &store.Change{
			Run: id, Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseSucceeded},
			Nodes: []apiv1.NodeStatus{{
				Name: "a", Phase: apiv1.PhaseSucceeded, Expansion: []byte(`[1]`),
				TrainerStatus: &apiv1.TrainerStatus{ProgressPercentage: new(int32(50))},
				Parties:       []apiv1.PartyShare{{Party: "y", Role: "host", Task: "a", State: apiv1.ShareSucceeded}},
				Artifacts:     []apiv1.CachedArtifact{{Name: "model", Path: "model.bin", Digest: "sha256:00", Size: 1}},
				Inputs:        map[string]string{"params.lr": "0.1"},
			}},
			Attempts: []store.AttemptRow{{Node: "a", AttemptStatus: apiv1.AttemptStatus{Number: 1, ID: string(id) + "/a/1"}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRun(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	tables := tablesOfRuns(t, s)
	if len(tables) < 7 {
		t.Fatalf("found tables %v, want at least runs and the six tables of a run's rows", tables)
	}
	for table, col := range tables {
		var gone, kept int
		q := `SELECT COUNT(*) FILTER (WHERE ` + col + ` = 'gone'), COUNT(*) FILTER (WHERE ` + col + ` = 'kept') FROM ` + table
		if err := s.db.QueryRowContext(ctx, q).Scan(&gone, &kept); err != nil {
			t.Fatal(err)
		}
		if gone != 0 || kept == 0 {
			t.Errorf("%s holds %d rows of the deleted run and %d of the kept one; want none and some", table, gone, kept)
		}
	}
}

// tablesOfRuns maps each table that holds rows of runs to its column naming the run.
func tablesOfRuns(t *testing.T, s *Store) map[string]string {
	t.Helper()
	rows, err := s.db.QueryContext(t.Context(), `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'cache\_%' ESCAPE '\' AND (p.name = 'run_id' OR (m.name = 'runs' AND p.name = 'id'))`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		out[table] = col
	}
	return out
}
