package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// statements are prepared once, when the store opens: a reconcile round
// runs them thousands of times, and parsing SQL would cost more than
// running it.
type statements struct {
	updateRun, fence, updateNode, insertNode, putExpansion, upsertAttempt, insertEvent *sql.Stmt
	putTrainerStatus                                                                   *sql.Stmt
}

func (st *statements) prepare(ctx context.Context, db *sql.DB, d Dialect) error {
	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{
		{&st.updateRun, `UPDATE runs SET phase = ?, code = ?, message = ?, started_at = ?, finished_at = ?, done = ?,
			outputs = ?, progress = ?, suspension = ? WHERE id = ? AND owner = ?`},
		{&st.fence, `SELECT 1 FROM runs WHERE id = ? AND owner = ?` + d.LockRows()},
		{&st.updateNode, `UPDATE nodes SET phase = ?, code = ?, message = ?, started_at = ?, finished_at = ?,
			retry_at = ?, outputs = ?, conditions = ?, replicas = ?, kind = ?, children = ?, gate = ?, cache = ?
			WHERE run_id = ? AND name = ?`},
		{&st.insertNode, `INSERT INTO nodes (run_id, position, name, phase, kind, parent, code, message, started_at,
			finished_at, retry_at, outputs, conditions, replicas, children, gate, cache)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`},
		{&st.putExpansion, `INSERT INTO node_expansions (run_id, node, expansion) VALUES (?,?,?)
			ON CONFLICT (run_id, node) DO UPDATE SET expansion = excluded.expansion`},
		{&st.upsertAttempt, `INSERT INTO attempts (run_id, node, number, id, phase, exit_code, signal, code, message, system,
			started_at, finished_at, nodes, joined, dropped, logs_lost) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, node, number) DO UPDATE SET
			phase = excluded.phase, exit_code = excluded.exit_code, signal = excluded.signal, code = excluded.code,
			message = excluded.message, system = excluded.system, started_at = excluded.started_at,
			finished_at = excluded.finished_at, nodes = excluded.nodes, joined = excluded.joined,
			dropped = excluded.dropped, logs_lost = excluded.logs_lost`},
		{&st.putTrainerStatus, `INSERT INTO node_trainer_status (run_id, node, status) VALUES (?,?,?)
			ON CONFLICT (run_id, node) DO UPDATE SET status = excluded.status`},
		{&st.insertEvent, `INSERT INTO events (run_id, node, attempt, phase, reason, code, message, time, term)
			VALUES (?,?,?,?,?,?,?,?,?)`},
	} {
		stmt, err := db.PrepareContext(ctx, p.text)
		if err != nil {
			return err
		}
		*p.dst = stmt
	}
	return nil
}

func (st *statements) close() error {
	var errs []error
	for _, s := range []*sql.Stmt{st.updateRun, st.fence, st.updateNode, st.insertNode, st.putExpansion, st.upsertAttempt, st.insertEvent, st.putTrainerStatus} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}
