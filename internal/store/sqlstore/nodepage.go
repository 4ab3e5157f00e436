package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// touchNodes counts run's node version up once and stamps the named
// nodes with it: they changed in this transaction.
func touchNodes(ctx context.Context, tx *sql.Tx, run apiv1.RunID, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var version int64
	if err := tx.QueryRowContext(ctx, `UPDATE runs SET node_version = node_version + 1 WHERE id = ? RETURNING node_version`, run).Scan(&version); err != nil {
		return err
	}
	return stampNodes(ctx, tx, run, version, names)
}

// stampNodes stamps the named nodes of run with version: they changed
// in this transaction, which counted the run's node version up to it.
func stampNodes(ctx context.Context, tx *sql.Tx, run apiv1.RunID, version int64, names []string) error {
	for start := 0; start < len(names); start += maxVars {
		chunk := names[start:min(start+maxVars, len(names))]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, version, run)
		for _, n := range chunk {
			args = append(args, n)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE nodes SET version = ? WHERE run_id = ? AND name IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")+`)`, args...); err != nil {
			return err
		}
	}
	return nil
}

// attemptsOnly names the nodes whose attempts c writes but whose rows it
// neither writes nor adds: their version is stamped apart.
func attemptsOnly(c *store.Change) []string {
	if len(c.Attempts) == 0 {
		return nil
	}
	seen := make(map[string]bool, len(c.Nodes)+len(c.Added))
	for _, list := range [][]apiv1.NodeStatus{c.Nodes, c.Added} {
		for _, n := range list {
			seen[n.Name] = true
		}
	}
	var names []string
	for _, a := range c.Attempts {
		if !seen[a.Node] {
			seen[a.Node] = true
			names = append(names, a.Node)
		}
	}
	return names
}

// ListNodes implements store.Runs. The page is read in one snapshot, so
// that its version is the one its nodes were read at: a live view asking
// for the nodes changed since gets those that changed, no fewer and no
// more.
func (s *Store) ListNodes(ctx context.Context, p store.ListNodesParams) (page *store.NodePage, err error) {
	defer s.coded(&err)
	err = s.snapshot(ctx, func(view *Store) error {
		page, err = view.listNodes(ctx, p)
		return err
	})
	return page, err
}

// listNodes reads the page of nodes p asks for.
func (s *Store) listNodes(ctx context.Context, p store.ListNodesParams) (_ *store.NodePage, err error) {
	page := &store.NodePage{Counts: map[apiv1.Phase]int{}}
	err = s.db.QueryRowContext(ctx, `SELECT node_version FROM runs WHERE id = ?`, p.Run).Scan(&page.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", p.Run, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if err := s.countNodes(ctx, p, page.Counts); err != nil {
		return nil, err
	}
	where, args := nodeFilter(p)
	limit := p.Limit
	if limit <= 0 {
		limit = apiv1.DefaultNodePage
	}
	nodes, positions, err := s.queryNodes(ctx, where+` AND nodes.position > ? ORDER BY nodes.position LIMIT ?`, append(args, p.After, limit)...)
	if err != nil {
		return nil, err
	}
	page.Nodes, page.Last = nodes, p.After
	if len(positions) > 0 {
		page.Last = positions[len(positions)-1]
	}
	if len(nodes) == limit {
		err = s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM nodes WHERE `+where+` AND nodes.position > ?`, append(args, page.Last)...).Scan(&page.Remaining)
		if err != nil {
			return nil, err
		}
	}
	return page, s.nodeDetails(ctx, p.Run, page.Nodes)
}

// countNodes counts by phase the nodes p's parent term keeps.
func (s *Store) countNodes(ctx context.Context, p store.ListNodesParams, counts map[apiv1.Phase]int) error {
	where, args := `run_id = ?`, []any{p.Run}
	if p.Parent != nil {
		where, args = where+` AND parent = ?`, append(args, *p.Parent)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT phase, COUNT(*) FROM nodes WHERE `+where+` GROUP BY phase`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var phase apiv1.Phase
		var n int
		if err := rows.Scan(&phase, &n); err != nil {
			return err
		}
		counts[phase] = n
	}
	return rows.Err()
}

// nodeFilter is the WHERE clause, on table nodes, of what p keeps.
func nodeFilter(p store.ListNodesParams) (string, []any) {
	where, args := `nodes.run_id = ?`, []any{p.Run}
	if p.Parent != nil {
		where, args = where+` AND nodes.parent = ?`, append(args, *p.Parent)
	}
	if len(p.Phases) > 0 {
		where += ` AND nodes.phase IN (` + strings.TrimSuffix(strings.Repeat("?,", len(p.Phases)), ",") + `)`
		args = append(args, toAny(p.Phases)...)
	}
	if p.Since != nil {
		where, args = where+` AND nodes.version > ?`, append(args, *p.Since)
	}
	return where, args
}

// nodeDetails adds to nodes of run what other tables keep of them:
// attempts, reuse, shares, artifacts, inputs and trainer status.
func (s *Store) nodeDetails(ctx context.Context, run apiv1.RunID, nodes []apiv1.NodeStatus) error {
	if len(nodes) == 0 {
		return nil
	}
	r := &apiv1.Run{ID: run, Status: apiv1.RunStatus{Nodes: nodes}}
	if err := errors.Join(s.attemptsOf(ctx, r), s.reused(ctx, r), s.partyShares(ctx, r), s.nodeArtifacts(ctx, r), s.nodeInputsOf(ctx, r)); err != nil {
		return err
	}
	return s.trainerStatuses(ctx, r)
}
