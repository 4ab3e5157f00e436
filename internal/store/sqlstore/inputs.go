package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// putNodeInputs saves the resolved inputs of the nodes of c that have them:
// one statement, prepared once for the change (a map's items have many).
func (s *Store) putNodeInputs(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	var stmt *sql.Stmt
	for _, list := range [][]apiv1.NodeStatus{c.Added, c.Nodes} {
		for _, n := range list {
			if len(n.Inputs) == 0 {
				continue
			}
			if stmt == nil {
				var err error
				if stmt, err = tx.PrepareContext(ctx, `INSERT INTO node_inputs (run_id, node, inputs) VALUES (?,?,?)
					ON CONFLICT (run_id, node) DO UPDATE SET inputs = excluded.inputs`); err != nil {
					return err
				}
				defer stmt.Close()
			}
			if _, err := stmt.ExecContext(ctx, c.Run, n.Name, mustJSON(n.Inputs)); err != nil {
				return err
			}
		}
	}
	return nil
}

// nodeInputs reads the resolved inputs of r's nodes.
func (s *Store) nodeInputs(ctx context.Context, r *apiv1.Run) error {
	return s.nodeColumn(ctx, r, `SELECT node, inputs FROM node_inputs WHERE run_id = ?`, func(n *apiv1.NodeStatus, v string) error {
		return json.Unmarshal([]byte(v), &n.Inputs)
	})
}

// nodeInputsOf reads the resolved inputs of r's nodes, which are a page of
// its nodes: only theirs are read, not the run's (a map's items have many).
func (s *Store) nodeInputsOf(ctx context.Context, r *apiv1.Run) error {
	if len(r.Status.Nodes) > maxVars {
		return s.nodeInputs(ctx, r)
	}
	where, args := ofNodes(r)
	return s.nodeColumnWhere(ctx, r, `SELECT node, inputs FROM node_inputs WHERE `+where, args, func(n *apiv1.NodeStatus, v string) error {
		return json.Unmarshal([]byte(v), &n.Inputs)
	})
}
