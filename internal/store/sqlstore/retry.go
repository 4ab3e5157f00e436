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

// notPreset keeps a retry off the nodes a rerun preset (the tasks it left
// out), for the run given as its one argument.
const notPreset = ` AND name NOT IN (SELECT node FROM preset_nodes WHERE run_id = ?)`

// RetryRun implements store.Runs.
func (s *Store) RetryRun(ctx context.Context, id apiv1.RunID, r store.Retry) (err error) {
	defer s.coded(&err)
	again, args := runsAgain(id, r.Restart)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		var phase apiv1.Phase
		err := tx.QueryRowContext(ctx, `SELECT phase FROM runs WHERE id = ?`, id).Scan(&phase)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if phase != apiv1.PhaseFailed && phase != apiv1.PhaseCancelled {
			return &store.PhaseError{Run: id, Phase: phase}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM gate_inputs WHERE run_id = ? AND node IN
			(SELECT name FROM nodes WHERE `+again+`)`, append([]any{id}, args...)...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE nodes SET phase = ?, code = '', message = '', finished_at = NULL,
			retry_at = NULL, gate = '', attempt_base = (SELECT COUNT(*) FROM attempts a WHERE a.run_id = nodes.run_id AND a.node = nodes.name)
			WHERE `+again, append([]any{apiv1.PhasePending}, args...)...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET phase = ?, code = '', message = '', started_at = NULL, finished_at = NULL, done = 0,
			suspension = '', cancel_requested = 0, owner = ?, lease_until = ? WHERE id = ?`, apiv1.PhasePending, r.Owner, r.Until.UnixNano(), id); err != nil {
			return err
		}
		if r.Params != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET params = ? WHERE id = ?`, mustJSON(r.Params), id); err != nil {
				return err
			}
		}
		if err := retryProgress(ctx, tx, id); err != nil {
			return err
		}
		return s.insertEvents(ctx, tx, id, []apiv1.Event{{
			Phase: apiv1.PhasePending, Reason: "Retried",
			Message: "retried after " + string(phase) + ": tasks that did not succeed run again", Time: time.Now().UTC(),
		}})
	})
}

// runsAgain is the condition on a node of run id that a retry makes
// Pending, and its arguments: it did not succeed, or it is (or is a child
// of) a node named in restart; and a rerun did not preset it.
func runsAgain(id apiv1.RunID, restart []string) (string, []any) {
	var or strings.Builder
	args := []any{id, apiv1.PhaseSucceeded}
	or.WriteString(`phase != ?`)
	for _, n := range restart {
		// substr, not LIKE: a name may hold LIKE's wildcards (_).
		or.WriteString(` OR name = ? OR substr(name, 1, ?) = ?`)
		args = append(args, n, utf8.RuneCountInString(n)+1, n+".")
	}
	return `run_id = ? AND (` + or.String() + `)` + notPreset, append(args, id)
}
