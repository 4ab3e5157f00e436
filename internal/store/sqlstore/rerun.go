package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// createPreset saves what a new run that is a rerun holds beyond a plain
// run: its source, and its preset nodes' state. It runs in CreateRun's
// transaction, after the nodes are inserted Pending.
func (s *Store) createPreset(ctx context.Context, tx *sql.Tx, p *store.CreateRunParams) error {
	r := &p.Run
	if r.RerunOf != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE run_specs SET rerun_of = ? WHERE run_id = ?`, mustJSON(r.RerunOf), r.ID); err != nil {
			return err
		}
	}
	for _, n := range p.Preset {
		if !slices.Contains(p.Nodes, n.Name) {
			return fmt.Errorf("preset node %s is not a node of run %s", n.Name, r.ID)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE nodes SET phase = ?, code = ?, message = ?, started_at = ?, finished_at = ?,
			outputs = ? WHERE run_id = ? AND name = ?`, n.Phase, n.Code, n.Message, nanos(n.StartedAt), nanos(n.FinishedAt),
			jsonOrEmpty(len(n.Outputs), n.Outputs), r.ID, n.Name); err != nil {
			return err
		}
		reused := ""
		if n.Reused != nil {
			reused = mustJSON(n.Reused)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO preset_nodes (run_id, node, reused) VALUES (?,?,?)`, r.ID, n.Name, reused); err != nil {
			return err
		}
		if err := putPresetArtifacts(ctx, tx, r.ID, n); err != nil {
			return err
		}
	}
	return nil
}

// reused fills in the Reused of r's nodes that a rerun reused.
func (s *Store) reused(ctx context.Context, r *apiv1.Run) error {
	return s.nodeColumn(ctx, r, `SELECT node, reused FROM preset_nodes WHERE run_id = ? AND reused != ''`, func(n *apiv1.NodeStatus, v string) error {
		return unmarshalIf(v, &n.Reused)
	})
}

// presetEvents record, for each node a rerun created in a final phase,
// that it was reused or left out: the run's events tell its whole story.
func presetEvents(p *store.CreateRunParams) []apiv1.Event {
	var out []apiv1.Event
	for _, n := range p.Preset {
		reason := "NotInRerun"
		if n.Reused != nil {
			reason = "Reused"
		}
		out = append(out, apiv1.Event{Node: n.Name, Phase: n.Phase, Reason: reason, Code: n.Code, Message: n.Message, Time: p.Run.CreatedAt})
	}
	return out
}
