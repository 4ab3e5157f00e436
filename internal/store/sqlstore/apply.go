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
	return s.grouped(ctx, func(ctx context.Context, tx *sql.Tx) error { return s.applyChange(ctx, tx, c) })
}

// applyChange writes c in tx, fenced by its owner and term: the first
// statement writes the run only if both still hold (fence), and counts
// its node version up when c changes nodes; each table is then written
// once, with the rows of all of c's nodes.
func (s *Store) applyChange(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	version, err := s.fence(ctx, tx, c, len(c.Nodes)+len(c.Added)+len(c.Attempts) > 0)
	if err != nil {
		return err
	}
	if err := s.upsertNodes(ctx, tx, c, version); err != nil {
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
	if err := stampNodes(ctx, tx, c.Run, version, attemptsOnly(c)); err != nil {
		return err
	}
	return s.insertEventsAt(ctx, tx, c.Run, c.Events, c.Term)
}

// fence writes the run's status, if c has one, and counts its node
// version up if bump, in one statement that finds the run only while
// c.Owner holds its lease under a term that still leads; a change of
// neither reads the run under the same conditions. It returns the run's
// node version.
func (s *Store) fence(ctx context.Context, tx *sql.Tx, c *store.Change, bump bool) (version int64, err error) {
	switch st := c.Status; {
	case st != nil:
		err = tx.StmtContext(ctx, s.stmts.updateRun).QueryRowContext(ctx, jsonIfSet(st.Outputs), jsonIfSet(st.Progress),
			jsonIfSet(st.Suspended), flag(bump), c.Run, c.Owner, c.Term, c.Term).Scan(&version)
		if err == nil {
			err = s.setRunPhase(ctx, tx, c.Run, st)
		}
	case bump:
		err = tx.StmtContext(ctx, s.stmts.bumpNodes).QueryRowContext(ctx, c.Run, c.Owner, c.Term, c.Term).Scan(&version)
	default:
		// The row is locked (LockRows) or the write lock is held, so the
		// owner read here cannot change before the commit.
		err = tx.StmtContext(ctx, s.stmts.fence).QueryRowContext(ctx, c.Run, c.Owner, c.Term, c.Term).Scan(&version)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fenceLost(ctx, tx, c)
	}
	return version, err
}

// fenceLost tells why the fence found no run: a term that no longer
// leads, or a lease lost.
func fenceLost(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	if err := fenceTerm(ctx, tx, c.Term); err != nil {
		return err
	}
	return fmt.Errorf("run %s, owner %s: %w", c.Run, c.Owner, store.ErrLeaseLost)
}

// setRunPhase writes the run's phase, code, message and times only if
// one of them changed: they are in the runs table's indexes, and most
// rounds change only the progress.
func (s *Store) setRunPhase(ctx context.Context, tx *sql.Tx, run apiv1.RunID, st *apiv1.RunStatus) error {
	started, finished := nanos(st.StartedAt), nanos(st.FinishedAt)
	_, err := tx.StmtContext(ctx, s.stmts.runPhase).ExecContext(ctx, st.Phase, st.Code, st.Message, started, finished,
		st.Phase.Done(), run, st.Phase, st.Code, st.Message, started, finished, st.Phase.Done())
	return err
}

// flag is b as the 0 or 1 a count moves by.
func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// upsertNodes writes c's nodes, stamped with the run's node version.
func (s *Store) upsertNodes(ctx context.Context, tx *sql.Tx, c *store.Change, version int64) error {
	if len(c.Nodes) > 0 {
		stmt := tx.StmtContext(ctx, s.stmts.updateNode)
		for _, n := range c.Nodes {
			if _, err := stmt.ExecContext(ctx, n.Phase, n.Code, n.Message, nanos(n.StartedAt), nanos(n.FinishedAt),
				nanos(n.RetryAt), jsonOrEmpty(len(n.Outputs), n.Outputs), jsonOrEmpty(len(n.Conditions), n.Conditions),
				jsonOrEmpty(len(n.Replicas), n.Replicas), n.Kind, jsonIfSet(n.Children), jsonIfSet(n.Gate),
				jsonIfSet(n.Cache), version, c.Run, n.Name); err != nil {
				return err
			}
		}
	}
	if err := s.insertNodes(ctx, tx, c, version); err != nil {
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
func (s *Store) insertNodes(ctx context.Context, tx *sql.Tx, c *store.Change, version int64) error {
	if len(c.Added) == 0 {
		return nil
	}
	var next int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(position) + 1, 0) FROM nodes WHERE run_id = ?`, c.Run).Scan(&next); err != nil {
		return err
	}
	args := make([]any, 0, len(c.Added)*nodeRows.cols)
	for i, n := range c.Added {
		args = append(args, c.Run, next+i, n.Name, n.Phase, n.Kind, n.Parent, n.Code, n.Message,
			nanos(n.StartedAt), nanos(n.FinishedAt), nanos(n.RetryAt), jsonOrEmpty(len(n.Outputs), n.Outputs),
			jsonOrEmpty(len(n.Conditions), n.Conditions), jsonOrEmpty(len(n.Replicas), n.Replicas),
			jsonIfSet(n.Children), jsonIfSet(n.Gate), jsonIfSet(n.Cache), version)
	}
	return s.execRows(ctx, tx, nodeRows, args)
}

// jsonIfSet stores a nil pointer as "", the column default.
func jsonIfSet[T any](v *T) string {
	if v == nil {
		return ""
	}
	return mustJSON(v)
}

// upsertAttempts writes c's attempts, by (node, number): of two rows of
// one attempt the later wins, as if written one after the other (one
// PostgreSQL statement may not update a row twice).
func (s *Store) upsertAttempts(ctx context.Context, tx *sql.Tx, c *store.Change) error {
	args := make([]any, 0, len(c.Attempts)*attemptRows.cols)
	last := lastOfEach(c.Attempts)
	for i, a := range c.Attempts {
		if last != nil && last[attemptID{a.Node, a.Number}] != i {
			continue
		}
		args = append(args, c.Run, a.Node, a.Number, a.ID, a.Phase, nullInt(a.ExitCode), a.Signal, a.Code,
			a.Message, a.System, nanos(a.StartedAt), nanos(a.FinishedAt), a.Nodes, a.Joined, jsonOrEmpty(len(a.Dropped), a.Dropped),
			jsonOrEmpty(len(a.LogsLost), a.LogsLost))
	}
	return s.execRows(ctx, tx, attemptRows, args)
}

// jsonOrEmpty stores an empty collection as "", the column default.
func jsonOrEmpty(n int, v any) string {
	if n == 0 {
		return ""
	}
	return mustJSON(v)
}

// attemptID is an attempt's key: its node and number.
type attemptID struct {
	node   string
	number int
}

// lastOfEach indexes the last row of each attempt in rows, or is nil
// when no attempt has two.
func lastOfEach(rows []store.AttemptRow) map[attemptID]int {
	if len(rows) < 2 {
		return nil
	}
	last := make(map[attemptID]int, len(rows))
	for i, a := range rows {
		last[attemptID{a.Node, a.Number}] = i
	}
	if len(last) == len(rows) {
		return nil
	}
	return last
}
