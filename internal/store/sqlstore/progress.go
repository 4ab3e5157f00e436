package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// firstProgress is a new run's progress: as given, else its tasks, none
// of them done but a rerun's preset ones.
func firstProgress(p *store.CreateRunParams) *apiv1.RunProgress {
	if pr := p.Run.Status.Progress; pr != nil {
		return pr
	}
	pr := &apiv1.RunProgress{Total: len(p.Nodes)}
	for _, n := range p.Preset {
		pr.Move(apiv1.PhasePending, n.Phase)
	}
	return pr
}

// putTrainerStatuses saves the trainer status of the nodes of c that have one.
func (s *Store) putTrainerStatuses(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	var stmt *sql.Stmt
	for _, list := range [][]apiv1.NodeStatus{c.Added, c.Nodes} {
		for _, n := range list {
			if n.TrainerStatus == nil {
				continue
			}
			if stmt == nil {
				stmt = tx.StmtContext(ctx, s.stmts.putTrainerStatus)
			}
			if _, err := stmt.ExecContext(ctx, c.Run, n.Name, mustJSON(n.TrainerStatus)); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainerStatuses reads the trainer statuses of r's nodes.
func (s *Store) trainerStatuses(ctx context.Context, r *apiv1.Run) error {
	return s.nodeColumn(ctx, r, `SELECT node, status FROM node_trainer_status WHERE run_id = ?`, func(n *apiv1.NodeStatus, v string) error {
		n.TrainerStatus = &apiv1.TrainerStatus{}
		return json.Unmarshal([]byte(v), n.TrainerStatus)
	})
}

// retryProgress counts a retried run afresh and drops what the training
// jobs that run again reported: they report anew.
func retryProgress(ctx context.Context, tx *sql.Tx, id apiv1.RunID) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM node_trainer_status WHERE run_id = ? AND node IN
		(SELECT name FROM nodes WHERE run_id = ? AND phase != ?)`, id, id, apiv1.PhaseSucceeded); err != nil {
		return err
	}
	return countProgress(ctx, tx, id)
}

// countProgress sets a run's progress from its nodes, counted the way the
// engine counts them (apiv1.RunProgress): every node but those that
// expanded into children. It reads every node of the run, so only rare
// writes (kiln retry) use it; the engine writes its own count each round.
func countProgress(ctx context.Context, tx *sql.Tx, id apiv1.RunID) error {
	rows, err := tx.QueryContext(ctx, `SELECT phase, COUNT(*) FROM nodes WHERE run_id = ? AND children = '' GROUP BY phase`, id)
	if err != nil {
		return err
	}
	var pr apiv1.RunProgress
	for rows.Next() {
		var phase apiv1.Phase
		var n int
		if err := rows.Scan(&phase, &n); err != nil {
			rows.Close()
			return err
		}
		pr.Add(phase, n)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET progress = ? WHERE id = ?`, mustJSON(&pr), id)
	return err
}
