package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// AddGateInput implements store.Gates. The checks and the insert share
// one write transaction, so a run cannot end between them.
func (s *Store) AddGateInput(ctx context.Context, id apiv1.RunID, node string, in apiv1.GateInput) (err error) {
	defer s.coded(&err)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if err := gateTarget(ctx, tx, id, node); err != nil {
			return err
		}
		approve := sql.NullBool{Bool: in.Approve != nil && *in.Approve, Valid: in.Approve != nil}
		var value sql.NullString
		if in.Value != nil {
			value = sql.NullString{String: *in.Value, Valid: true}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO gate_inputs (run_id, node, approve, value, reason, sent_by, at)
			VALUES (?,?,?,?,?,?,?)`, id, node, approve, value, in.Reason, in.By, in.At.UnixNano())
		return err
	})
}

// gateTarget checks that run id has not ended and has a node named node.
func gateTarget(ctx context.Context, tx *sql.Tx, id apiv1.RunID, node string) error {
	if err := liveRun(ctx, tx, id); err != nil {
		return err
	}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM nodes WHERE run_id = ? AND name = ?`, id, node).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %s has no node %q: %w", id, node, store.ErrNotFound)
	}
	return err
}

// GateInputs implements store.Gates.
func (s *Store) GateInputs(ctx context.Context, id apiv1.RunID) (_ []store.GateInputRow, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT node, approve, value, reason, sent_by, at
		FROM gate_inputs WHERE run_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.GateInputRow
	for rows.Next() {
		var r store.GateInputRow
		var approve sql.NullBool
		var value sql.NullString
		var at int64
		if err := rows.Scan(&r.Node, &approve, &value, &r.Reason, &r.By, &at); err != nil {
			return nil, err
		}
		if approve.Valid {
			r.Approve = &approve.Bool
		}
		if value.Valid {
			r.Value = &value.String
		}
		r.At = *timeOf(sql.NullInt64{Int64: at, Valid: true})
		out = append(out, r)
	}
	return out, rows.Err()
}
