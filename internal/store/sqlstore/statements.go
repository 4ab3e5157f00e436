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
	updateRun, runPhase, bumpNodes, fence, updateNode, putExpansion, putTrainerStatus *sql.Stmt

	// insertRun and insertSpec write a new run (CreateRun).
	insertRun, insertSpec *sql.Stmt
}

// fenced ends the statements that stand for a round's fence: the run is
// written only while its owner holds its lease and, for a writer under a
// leadership term, while that term still leads. Its arguments are the
// run, the owner and the term twice.
const fenced = ` WHERE id = ? AND owner = ? AND (CAST(? AS BIGINT) = 0 OR ? = (SELECT term FROM leadership WHERE id = 1))`

func (st *statements) prepare(ctx context.Context, db *sql.DB, d Dialect) error {
	for _, p := range []struct {
		dst  **sql.Stmt
		text string
	}{
		{&st.updateRun, `UPDATE runs SET outputs = ?, progress = ?, suspension = ?, node_version = node_version + ?` +
			fenced + ` RETURNING node_version`},
		{&st.runPhase, `UPDATE runs SET phase = ?, code = ?, message = ?, started_at = ?, finished_at = ?, done = ?
			WHERE id = ? AND (phase <> ? OR code <> ? OR message <> ? OR started_at IS DISTINCT FROM ?
			OR finished_at IS DISTINCT FROM ? OR done <> ?)`},
		{&st.bumpNodes, `UPDATE runs SET node_version = node_version + 1` + fenced + ` RETURNING node_version`},
		{&st.fence, `SELECT node_version FROM runs` + fenced + d.LockRows()},
		{&st.updateNode, `UPDATE nodes SET phase = ?, code = ?, message = ?, started_at = ?, finished_at = ?,
			retry_at = ?, outputs = ?, conditions = ?, replicas = ?, kind = ?, children = ?, gate = ?, cache = ?,
			version = ? WHERE run_id = ? AND name = ?`},
		{&st.putExpansion, `INSERT INTO node_expansions (run_id, node, expansion) VALUES (?,?,?)
			ON CONFLICT (run_id, node) DO UPDATE SET expansion = excluded.expansion`},
		{&st.putTrainerStatus, `INSERT INTO node_trainer_status (run_id, node, status) VALUES (?,?,?)
			ON CONFLICT (run_id, node) DO UPDATE SET status = excluded.status`},
		{&st.insertRun, `INSERT INTO runs (id, name, kind, labels, params, source, work_dir, created_at, phase, owner,
			lease_until, suspend, project, done, cache_mode, lease_term, ttl_seconds, keep_succeeded, keep_failed, progress)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`},
		{&st.insertSpec, `INSERT INTO run_specs (run_id, workflow, subworkflows) VALUES (?,?,?)`},
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
	for _, s := range []*sql.Stmt{st.updateRun, st.runPhase, st.bumpNodes, st.fence, st.updateNode, st.putExpansion, st.putTrainerStatus, st.insertRun, st.insertSpec} {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}
