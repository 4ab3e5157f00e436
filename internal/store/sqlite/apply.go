package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"kiln.dev/kiln/internal/store"
)

// Apply implements store.Writer. The first statement is the fence: it
// touches the run only if c.Owner still holds its lease.
func (s *Store) Apply(ctx context.Context, c *store.Change) error {
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if err := fence(ctx, tx, c); err != nil {
			return err
		}
		if err := upsertNodes(ctx, tx, c); err != nil {
			return err
		}
		if err := upsertAttempts(ctx, tx, c); err != nil {
			return err
		}
		return insertEvents(ctx, tx, c.Run, c.Events)
	})
}

func fence(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	var res sql.Result
	var err error
	if st := c.Status; st != nil {
		res, err = tx.ExecContext(ctx, `UPDATE runs SET phase = ?, code = ?, message = ?, started_at = ?, finished_at = ?,
			done = ? WHERE id = ? AND owner = ?`, st.Phase, st.Code, st.Message, nanos(st.StartedAt), nanos(st.FinishedAt),
			st.Phase.Done(), c.Run, c.Owner)
	} else {
		res, err = tx.ExecContext(ctx, `UPDATE runs SET owner = owner WHERE id = ? AND owner = ?`, c.Run, c.Owner)
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("run %s, owner %s: %w", c.Run, c.Owner, store.ErrLeaseLost)
	}
	return nil
}

func upsertNodes(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	if len(c.Nodes) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `UPDATE nodes SET phase = ?, code = ?, message = ?, started_at = ?,
		finished_at = ?, retry_at = ?, outputs = ? WHERE run_id = ? AND name = ?`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, n := range c.Nodes {
		outputs := ""
		if len(n.Outputs) > 0 {
			outputs = mustJSON(n.Outputs)
		}
		if _, err := stmt.ExecContext(ctx, n.Phase, n.Code, n.Message, nanos(n.StartedAt), nanos(n.FinishedAt),
			nanos(n.RetryAt), outputs, c.Run, n.Name); err != nil {
			return err
		}
	}
	return nil
}

func upsertAttempts(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	if len(c.Attempts) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO attempts (run_id, node, number, id, phase, exit_code, code, message,
		started_at, finished_at) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, node, number) DO UPDATE SET
		phase = excluded.phase, exit_code = excluded.exit_code, code = excluded.code, message = excluded.message,
		started_at = excluded.started_at, finished_at = excluded.finished_at`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, a := range c.Attempts {
		if _, err := stmt.ExecContext(ctx, c.Run, a.Node, a.Number, a.ID, a.Phase, nullInt(a.ExitCode), a.Code,
			a.Message, nanos(a.StartedAt), nanos(a.FinishedAt)); err != nil {
			return err
		}
	}
	return nil
}
