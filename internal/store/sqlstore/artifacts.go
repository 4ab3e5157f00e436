package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// putNodeArtifacts saves the stored artifacts of the round's nodes that
// have any.
func (s *Store) putNodeArtifacts(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	for _, list := range [][]apiv1.NodeStatus{c.Added, c.Nodes} {
		for _, n := range list {
			if len(n.Artifacts) == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO node_artifacts (run_id, node, artifacts) VALUES (?,?,?)
				ON CONFLICT (run_id, node) DO UPDATE SET artifacts = excluded.artifacts`,
				c.Run, n.Name, mustJSON(n.Artifacts)); err != nil {
				return err
			}
		}
	}
	return nil
}

// putPresetArtifacts saves the artifacts of the nodes a rerun reuses.
func putPresetArtifacts(ctx context.Context, tx *sql.Tx, run apiv1.RunID, n apiv1.NodeStatus) error {
	if len(n.Artifacts) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO node_artifacts (run_id, node, artifacts) VALUES (?,?,?)`, run, n.Name, mustJSON(n.Artifacts))
	return err
}

// nodeArtifacts reads the stored artifacts of r's nodes.
func (s *Store) nodeArtifacts(ctx context.Context, r *apiv1.Run) error {
	return s.nodeColumn(ctx, r, `SELECT node, artifacts FROM node_artifacts WHERE run_id = ?`, func(n *apiv1.NodeStatus, v string) error {
		return json.Unmarshal([]byte(v), &n.Artifacts)
	})
}
