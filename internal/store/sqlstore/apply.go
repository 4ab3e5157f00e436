package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// Apply implements store.Writer. The first statement is the fence: it
// touches the run only if c.Owner still holds its lease. Changes of other
// runs applied at the same time may share its transaction
// (groupcommit.go); its answer is its own.
func (s *Store) Apply(ctx context.Context, c *store.Change) (err error) {
	defer s.coded(&err)
	return s.applyGrouped(ctx, c)
}

// applyChange writes c in tx, fenced by its owner and term.
func (s *Store) applyChange(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	if err := fenceTerm(ctx, tx, c.Term); err != nil {
		return err
	}
	if err := s.fence(ctx, tx, c); err != nil {
		return err
	}
	if err := s.upsertNodes(ctx, tx, c); err != nil {
		return err
	}
	if err := s.upsertAttempts(ctx, tx, c); err != nil {
		return err
	}
	if err := s.putTrainerStatuses(ctx, tx, c); err != nil {
		return err
	}
	if err := s.putPartyShares(ctx, tx, c); err != nil {
		return err
	}
	if err := s.putNodeArtifacts(ctx, tx, c); err != nil {
		return err
	}
	if err := s.putNodeInputs(ctx, tx, c); err != nil {
		return err
	}
	if err := touchNodes(ctx, tx, c.Run, touched(c)); err != nil {
		return err
	}
	return s.insertEventsAt(ctx, tx, c.Run, c.Events, c.Term)
}

func (s *Store) fence(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	var res sql.Result
	var err error
	if st := c.Status; st != nil {
		res, err = tx.StmtContext(ctx, s.stmts.updateRun).ExecContext(ctx, st.Phase, st.Code, st.Message,
			nanos(st.StartedAt), nanos(st.FinishedAt), st.Phase.Done(), jsonIfSet(st.Outputs), jsonIfSet(st.Progress), jsonIfSet(st.Suspended), c.Run, c.Owner)
	} else {
		// The row is locked (LockRows) or the write lock is held, so the
		// owner read here cannot change before the commit.
		var one int
		err = tx.StmtContext(ctx, s.stmts.fence).QueryRowContext(ctx, c.Run, c.Owner).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s, owner %s: %w", c.Run, c.Owner, store.ErrLeaseLost)
		}
		return err
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("run %s, owner %s: %w", c.Run, c.Owner, store.ErrLeaseLost)
	}
	return nil
}

func (s *Store) upsertNodes(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	if len(c.Nodes) > 0 {
		stmt := tx.StmtContext(ctx, s.stmts.updateNode)
		for _, n := range c.Nodes {
			if _, err := stmt.ExecContext(ctx, n.Phase, n.Code, n.Message, nanos(n.StartedAt), nanos(n.FinishedAt),
				nanos(n.RetryAt), jsonOrEmpty(len(n.Outputs), n.Outputs), jsonOrEmpty(len(n.Conditions), n.Conditions),
				jsonOrEmpty(len(n.Replicas), n.Replicas), n.Kind, jsonIfSet(n.Children), jsonIfSet(n.Gate),
				jsonIfSet(n.Cache), c.Run, n.Name); err != nil {
				return err
			}
		}
	}
	if err := s.insertNodes(ctx, tx, c); err != nil {
		return err
	}
	return s.putExpansions(ctx, tx, c)
}

// putExpansions writes what nodes expanded into, for those that did.
func (s *Store) putExpansions(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	stmt := tx.StmtContext(ctx, s.stmts.putExpansion)
	for _, list := range [][]apiv1.NodeStatus{c.Added, c.Nodes} {
		for _, n := range list {
			if len(n.Expansion) == 0 {
				continue
			}
			if _, err := stmt.ExecContext(ctx, c.Run, n.Name, string(n.Expansion)); err != nil {
				return err
			}
		}
	}
	return nil
}

// insertNodes saves the nodes a round made, after the run's last one.
func (s *Store) insertNodes(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	if len(c.Added) == 0 {
		return nil
	}
	var next int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(position) + 1, 0) FROM nodes WHERE run_id = ?`, c.Run).Scan(&next); err != nil {
		return err
	}
	stmt := tx.StmtContext(ctx, s.stmts.insertNode)
	for i, n := range c.Added {
		if _, err := stmt.ExecContext(ctx, c.Run, next+i, n.Name, n.Phase, n.Kind, n.Parent, n.Code, n.Message,
			nanos(n.StartedAt), nanos(n.FinishedAt), nanos(n.RetryAt), jsonOrEmpty(len(n.Outputs), n.Outputs),
			jsonOrEmpty(len(n.Conditions), n.Conditions), jsonOrEmpty(len(n.Replicas), n.Replicas),
			jsonIfSet(n.Children), jsonIfSet(n.Gate), jsonIfSet(n.Cache)); err != nil {
			return err
		}
	}
	return nil
}

// jsonIfSet stores a nil pointer as "", the column default.
func jsonIfSet[T any](v *T) string {
	if v == nil {
		return ""
	}
	return mustJSON(v)
}

func (s *Store) upsertAttempts(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	if len(c.Attempts) == 0 {
		return nil
	}
	stmt := tx.StmtContext(ctx, s.stmts.upsertAttempt)
	for _, a := range c.Attempts {
		if _, err := stmt.ExecContext(ctx, c.Run, a.Node, a.Number, a.ID, a.Phase, nullInt(a.ExitCode), a.Signal, a.Code,
			a.Message, a.System, nanos(a.StartedAt), nanos(a.FinishedAt), a.Nodes, a.Joined, jsonOrEmpty(len(a.Dropped), a.Dropped),
			jsonOrEmpty(len(a.LogsLost), a.LogsLost)); err != nil {
			return err
		}
	}
	return nil
}

// jsonOrEmpty stores an empty collection as "", the column default.
func jsonOrEmpty(n int, v any) string {
	if n == 0 {
		return ""
	}
	return mustJSON(v)
}
