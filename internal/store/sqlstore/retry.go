package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// RetryRun implements store.Runs.
func (s *Store) RetryRun(ctx context.Context, id apiv1.RunID, r store.Retry) (err error) {
	defer s.coded(&err)
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
		again, err := runsAgain(ctx, tx, id, r.Restart)
		if err != nil {
			return err
		}
		if err := resetNodes(ctx, tx, id, again); err != nil {
			return err
		}
		if err := touchNodes(ctx, tx, id, again); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET phase = ?, code = '', message = '', started_at = NULL, finished_at = NULL, done = 0,
			suspension = '', suspend = ?, cancel_requested = 0, owner = ?, lease_until = ? WHERE id = ?`, apiv1.PhasePending, false, r.Owner, r.Until.UnixNano(), id); err != nil {
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
		by := ""
		if r.By != "" {
			by = " by " + r.By
		}
		return s.insertEvents(ctx, tx, id, []apiv1.Event{{
			Phase: apiv1.PhasePending, Reason: "Retried",
			Message: "retried after " + string(phase) + by + ": tasks that did not succeed run again, and the exit handlers", Time: time.Now().UTC(),
		}})
	})
}

// runsAgain lists the nodes of run id that a retry makes Pending: those
// that did not succeed, and those restart names with their children,
// except the children of a group that succeeded and is not restarted (a
// map's item that failed within its minSuccessRatio stays as it ended),
// and except the nodes a rerun preset (the tasks it left out).
func runsAgain(ctx context.Context, tx *sql.Tx, id apiv1.RunID, restart []string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT name, parent, phase FROM nodes WHERE run_id = ?
		AND name NOT IN (SELECT node FROM preset_nodes WHERE run_id = ?) ORDER BY position`, id, id)
	if err != nil {
		return nil, err
	}
	type row struct {
		name, parent string
		phase        apiv1.Phase
	}
	var all []row
	byName := map[string]row{}
	for rows.Next() {
		var n row
		if err := rows.Scan(&n.name, &n.parent, &n.phase); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, n)
		byName[n.name] = n
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	restarted := func(name string) bool {
		return slices.ContainsFunc(restart, func(r string) bool { return name == r || strings.HasPrefix(name, r+".") })
	}
	kept := func(n row) bool { return n.phase == apiv1.PhaseSucceeded && !restarted(n.name) }
	var out []string
	for _, n := range all {
		if kept(n) {
			continue
		}
		inKept := false
		for p, ok := byName[n.parent]; ok && !inKept; p, ok = byName[p.parent] {
			inKept = kept(p)
		}
		if !inKept {
			out = append(out, n.name)
		}
	}
	return out, nil
}

// resetNodes makes the named nodes of run id Pending, past the attempts
// they had, their gate inputs dropped, in chunks of maxVars names.
func resetNodes(ctx context.Context, tx *sql.Tx, id apiv1.RunID, names []string) error {
	for start := 0; start < len(names); start += maxVars {
		chunk := names[start:min(start+maxVars, len(names))]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, id)
		for _, n := range chunk {
			args = append(args, n)
		}
		in := `run_id = ? AND name IN (` + strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",") + `)`
		if _, err := tx.ExecContext(ctx, `DELETE FROM gate_inputs WHERE `+strings.Replace(in, "name IN", "node IN", 1), args...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE nodes SET phase = ?, code = '', message = '', finished_at = NULL,
			retry_at = NULL, gate = '', attempt_base = (SELECT COUNT(*) FROM attempts a WHERE a.run_id = nodes.run_id AND a.node = nodes.name)
			WHERE `+in, append([]any{apiv1.PhasePending}, args...)...); err != nil {
			return err
		}
	}
	return nil
}
