package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// lifeOf is how long run r is kept, from its spec: its TTL after it
// finishes and how many of its name's succeeded and failed runs are
// kept, each NULL where the spec says nothing.
func lifeOf(r *apiv1.Run) (ttl, succeeded, failed sql.NullInt64) {
	if r.Workflow == nil {
		return ttl, succeeded, failed
	}
	spec := &r.Workflow.Spec
	if t := spec.TTLSecondsAfterFinished; t != nil {
		ttl = sql.NullInt64{Int64: int64(*t), Valid: true}
	}
	if h := spec.HistoryLimit; h != nil {
		succeeded, failed = nullInt32(h.Succeeded), nullInt32(h.Failed)
	}
	return ttl, succeeded, failed
}

func nullInt32(v *int32) sql.NullInt64 {
	if v == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*v), Valid: true}
}

// runTables are the tables that hold a run's rows, children first; the
// runs row goes last. Foreign keys cascade too: this list deletes what
// they would, explicitly, so that a table without a cascade is emptied.
var runTables = []string{"run_labels", "submit_keys", "part_heard", "channel_chunks", "channel_messages", "share_orders", "node_party_shares", "node_artifacts", "node_inputs", "run_federation", "gate_inputs", "node_expansions", "preset_nodes", "node_trainer_status", "attempts", "events", "nodes", "run_specs"}

// DeleteRun implements store.Life.
func (s *Store) DeleteRun(ctx context.Context, id apiv1.RunID) (err error) {
	defer s.coded(&err)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var phase apiv1.Phase
		var done bool
		err := tx.QueryRowContext(ctx, `SELECT phase, done FROM runs WHERE id = ?`, id).Scan(&phase, &done)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if !done {
			return &store.PhaseError{Run: id, Phase: phase}
		}
		readers, err := readers(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(readers) > 0 {
			return &store.InUseError{Run: id, Readers: readers}
		}
		for _, table := range runTables {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id = ?`, id); err != nil {
				return fmt.Errorf("deleting run %s from %s: %w", id, table, err)
			}
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id)
		return err
	})
}

// Readers implements store.Life.
func (s *Store) Readers(ctx context.Context, id apiv1.RunID) (_ []apiv1.RunID, err error) {
	defer s.coded(&err)
	return readers(ctx, s.db, id)
}

// rowsQuerier is what a query of many rows needs of a *sql.DB or a *sql.Tx.
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readers lists the unfinished runs with a node that reuses a result of
// run id. A preset node's reused column is the JSON of apiv1.Reused,
// which starts with the run it names; substr, not LIKE, as an ID may hold
// LIKE's wildcards.
func readers(ctx context.Context, q rowsQuerier, id apiv1.RunID) ([]apiv1.RunID, error) {
	prefix := `{"run":` + mustJSON(id)
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT p.run_id FROM preset_nodes p JOIN runs r ON r.id = p.run_id
		WHERE r.done = 0 AND substr(p.reused, 1, ?) = ? ORDER BY p.run_id`, utf8.RuneCountInString(prefix), prefix)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []apiv1.RunID
	for rows.Next() {
		var r apiv1.RunID
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

const refColumns = `id, name, project, phase, finished_at`

func scanRefs(rows *sql.Rows, extra func(*store.RunRef, int64)) ([]store.RunRef, error) {
	defer rows.Close()
	var out []store.RunRef
	for rows.Next() {
		var r store.RunRef
		var finished sql.NullInt64
		var n int64
		if err := rows.Scan(&r.ID, &r.Name, &r.Project, &r.Phase, &finished, &n); err != nil {
			return nil, err
		}
		if t := timeOf(finished); t != nil {
			r.FinishedAt = *t
		}
		extra(&r, n)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ExpiredRuns implements store.Life.
func (s *Store) ExpiredRuns(ctx context.Context, now time.Time) (_ []store.RunRef, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT `+refColumns+`, ttl_seconds FROM runs
		WHERE done = 1 AND ttl_seconds IS NOT NULL AND finished_at + ttl_seconds * 1000000000 <= ?
		ORDER BY finished_at + ttl_seconds * 1000000000, id`, now.UnixNano())
	if err != nil {
		return nil, err
	}
	return scanRefs(rows, func(r *store.RunRef, ttl int64) { r.TTL = time.Duration(ttl) * time.Second })
}

// RunsOverHistory implements store.Life. Runs are numbered newest first
// within their name, project and class; the newest finished run of the
// name and project gives the limits. With no default limit, only the
// names of which some finished run sets a limit are numbered: numbering
// every finished run took the collector a second and a half of CPU at
// 100,000 runs, each minute.
func (s *Store) RunsOverHistory(ctx context.Context, def store.HistoryLimit) (_ []store.RunRef, err error) {
	defer s.coded(&err)
	limited := ""
	if def.Succeeded < 0 && def.Failed < 0 {
		limited = ` AND (name, project) IN (SELECT name, project FROM runs
			WHERE done = 1 AND (keep_succeeded IS NOT NULL OR keep_failed IS NOT NULL))`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+refColumns+`, keep FROM (
		SELECT `+refColumns+`, n, CASE WHEN phase = ? THEN COALESCE(ks, ?) ELSE COALESCE(kf, ?) END AS keep FROM (
			SELECT `+refColumns+`,
				ROW_NUMBER() OVER (PARTITION BY name, project, phase = ? ORDER BY created_at DESC, id DESC) AS n,
				FIRST_VALUE(keep_succeeded) OVER newest AS ks, FIRST_VALUE(keep_failed) OVER newest AS kf
			FROM runs WHERE done = 1`+limited+`
			WINDOW newest AS (PARTITION BY name, project ORDER BY created_at DESC, id DESC)) AS numbered) AS kept
		WHERE keep >= 0 AND n > keep ORDER BY name, project, finished_at, id`,
		apiv1.PhaseSucceeded, def.Succeeded, def.Failed, apiv1.PhaseSucceeded)
	if err != nil {
		return nil, err
	}
	return scanRefs(rows, func(r *store.RunRef, keep int64) { r.Keep = int(keep) })
}

// maxVars bounds the IDs one query asks about.
const maxVars = 500

// MissingRuns implements store.Life.
func (s *Store) MissingRuns(ctx context.Context, ids []apiv1.RunID) (_ []apiv1.RunID, err error) {
	defer s.coded(&err)
	found := map[apiv1.RunID]bool{}
	for start := 0; start < len(ids); start += maxVars {
		chunk := ids[start:min(start+maxVars, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		marks := strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")
		rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE id IN (`+marks+`)`, args...)
		if err != nil {
			return nil, err
		}
		if err := collectIDs(rows, found); err != nil {
			return nil, err
		}
	}
	var missing []apiv1.RunID
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

func collectIDs(rows *sql.Rows, into map[apiv1.RunID]bool) error {
	defer rows.Close()
	for rows.Next() {
		var id apiv1.RunID
		if err := rows.Scan(&id); err != nil {
			return err
		}
		into[id] = true
	}
	return rows.Err()
}
