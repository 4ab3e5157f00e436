package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math/bits"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// PutShareOrder implements store.Federation. The checks and the write
// share one transaction, so a part cannot end between them.
func (s *Store) PutShareOrder(ctx context.Context, id apiv1.RunID, node string, o store.ShareOrderRow) (err error) {
	defer s.coded(&err)
	return s.withTx(ctx, func(tx *sql.Tx) error {
		if err := gateTarget(ctx, tx, id, node); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO share_orders (run_id, node, attempt, action, peers, reason, address, at, code, inputs)
			VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, node) DO UPDATE SET attempt = excluded.attempt,
			action = excluded.action, peers = excluded.peers, reason = excluded.reason, address = excluded.address, at = excluded.at,
			code = excluded.code, inputs = excluded.inputs`, id, node, o.Attempt, o.Action, jsonOrEmpty(len(o.Peers), o.Peers), o.Reason, o.Address, o.At.UnixNano(), o.Code,
			jsonOrEmpty(len(o.Inputs), o.Inputs))
		return err
	})
}

// ShareOrders implements store.Federation.
func (s *Store) ShareOrders(ctx context.Context, id apiv1.RunID) (_ map[string]store.ShareOrderRow, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT node, attempt, action, peers, reason, address, at, code, inputs FROM share_orders WHERE run_id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]store.ShareOrderRow{}
	for rows.Next() {
		var node, peers, inputs string
		var at int64
		var o store.ShareOrderRow
		if err := rows.Scan(&node, &o.Attempt, &o.Action, &peers, &o.Reason, &o.Address, &at, &o.Code, &inputs); err != nil {
			return nil, err
		}
		if err := unmarshalIf(peers, &o.Peers); err != nil {
			return nil, err
		}
		if err := unmarshalIf(inputs, &o.Inputs); err != nil {
			return nil, err
		}
		o.At = *timeOf(sql.NullInt64{Int64: at, Valid: true})
		out[node] = o
	}
	return out, rows.Err()
}

// HeardFromInitiator implements store.Federation.
func (s *Store) HeardFromInitiator(ctx context.Context, id apiv1.RunID, at time.Time) (err error) {
	defer s.coded(&err)
	_, err = s.db.ExecContext(ctx, `INSERT INTO part_heard (run_id, at) VALUES (?,?)
		ON CONFLICT (run_id) DO UPDATE SET at = excluded.at WHERE excluded.at > part_heard.at`, id, at.UnixNano())
	return err
}

// SilentParts implements store.Federation.
func (s *Store) SilentParts(ctx context.Context, before time.Time) (_ map[apiv1.RunID]time.Time, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT h.run_id, h.at FROM part_heard h JOIN runs r ON r.id = h.run_id
		WHERE r.done = 0 AND h.at < ?`, before.UnixNano())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[apiv1.RunID]time.Time{}
	for rows.Next() {
		var id apiv1.RunID
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, err
		}
		out[id] = time.Unix(0, at).UTC()
	}
	return out, rows.Err()
}

// putFederation saves how run r takes part in a federation, if it does.
func putFederation(ctx context.Context, tx *sql.Tx, r *apiv1.Run) error {
	if r.Federation == nil {
		return nil
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO run_federation (run_id, info) VALUES (?,?)`, r.ID, mustJSON(r.Federation))
	return err
}

// federation reads how run r takes part in a federation, if it does.
func (s *Store) federation(ctx context.Context, r *apiv1.Run) error {
	var info string
	err := s.db.QueryRowContext(ctx, `SELECT info FROM run_federation WHERE run_id = ?`, r.ID).Scan(&info)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	r.Federation = &apiv1.FederationInfo{}
	return json.Unmarshal([]byte(info), r.Federation)
}

// federations reads how each of runs takes part in a federation, in one
// query.
func (s *Store) federations(ctx context.Context, runs []*apiv1.Run) error {
	if len(runs) == 0 {
		return nil
	}
	byID := make(map[apiv1.RunID]*apiv1.Run, len(runs))
	// The IDs are padded to a power of two with the last one, so that a
	// few texts serve every page and each is prepared once.
	args := make([]any, 1<<bits.Len(uint(len(runs)-1)))
	for i := range args {
		r := runs[min(i, len(runs)-1)]
		byID[r.ID], args[i] = r, r.ID
	}
	rows, err := s.queryRead(ctx, `SELECT run_id, info FROM run_federation WHERE run_id IN (?`+strings.Repeat(",?", len(args)-1)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id apiv1.RunID
		var info string
		if err := rows.Scan(&id, &info); err != nil {
			return err
		}
		f := &apiv1.FederationInfo{}
		if err := json.Unmarshal([]byte(info), f); err != nil {
			return err
		}
		byID[id].Federation = f
	}
	return rows.Err()
}

// putPartyShares saves the shares of the round's federated nodes.
func (s *Store) putPartyShares(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	for _, list := range [][]apiv1.NodeStatus{c.Added, c.Nodes} {
		for _, n := range list {
			if len(n.Parties) == 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO node_party_shares (run_id, node, shares) VALUES (?,?,?)
				ON CONFLICT (run_id, node) DO UPDATE SET shares = excluded.shares`,
				c.Run, n.Name, mustJSON(n.Parties)); err != nil {
				return err
			}
		}
	}
	return nil
}

// partyShares reads the shares of r's federated nodes.
func (s *Store) partyShares(ctx context.Context, r *apiv1.Run) error {
	return s.nodeColumn(ctx, r, `SELECT node, shares FROM node_party_shares WHERE run_id = ?`, func(n *apiv1.NodeStatus, v string) error {
		return json.Unmarshal([]byte(v), &n.Parties)
	})
}

// nodeColumn reads rows of (node, value) of run r with query, and hands
// each value to set with its node, if the run has that node.
func (s *Store) nodeColumn(ctx context.Context, r *apiv1.Run, query string, set func(n *apiv1.NodeStatus, v string) error) error {
	return s.nodeColumnWhere(ctx, r, query, []any{r.ID}, set)
}

// nodeColumnWhere is nodeColumn with the query's own arguments.
func (s *Store) nodeColumnWhere(ctx context.Context, r *apiv1.Run, query string, args []any, set func(n *apiv1.NodeStatus, v string) error) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var index map[string]int
	for rows.Next() {
		var node, v string
		if err := rows.Scan(&node, &v); err != nil {
			return err
		}
		if index == nil {
			index = make(map[string]int, len(r.Status.Nodes))
			for i, n := range r.Status.Nodes {
				index[n.Name] = i
			}
		}
		if i, ok := index[node]; ok {
			if err := set(&r.Status.Nodes[i], v); err != nil {
				return err
			}
		}
	}
	return rows.Err()
}
