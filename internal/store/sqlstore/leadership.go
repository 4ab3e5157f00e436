package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"kiln.dev/kiln/internal/store"
)

// Lead implements store.Leadership. The read and the write are one
// transaction: of two replicas bidding at once, one wins.
func (s *Store) Lead(ctx context.Context, p store.LeadParams) (l store.Leader, err error) {
	defer s.coded(&err)
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		cur, err := readLeader(ctx, tx)
		if err != nil {
			return err
		}
		switch {
		case cur.Holder == p.Holder && cur.Term > 0:
			_, err = tx.ExecContext(ctx, `UPDATE leadership SET until = ?, address = ? WHERE id = 1 AND term = ?`,
				p.Until.UnixNano(), p.Address, cur.Term)
			cur.Until, cur.Address = p.Until, p.Address
		case cur.Term == 0 || !cur.Until.After(p.Now) || (p.IsDead != nil && p.IsDead(cur.Holder)):
			cur = store.Leader{Holder: p.Holder, Address: p.Address, Term: cur.Term + 1, Since: p.Now, Until: p.Until}
			_, err = tx.ExecContext(ctx, `INSERT INTO leadership (id, holder, address, term, since, until) VALUES (1, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, address = excluded.address, term = excluded.term,
				since = excluded.since, until = excluded.until`,
				cur.Holder, cur.Address, cur.Term, cur.Since.UnixNano(), cur.Until.UnixNano())
		}
		l = cur
		return err
	})
	return l, err
}

// Leader implements store.Leadership.
func (s *Store) Leader(ctx context.Context) (l store.Leader, err error) {
	defer s.coded(&err)
	return readLeader(ctx, s.db)
}

// Resign implements store.Leadership.
func (s *Store) Resign(ctx context.Context, holder string, term int64) (err error) {
	defer s.coded(&err)
	_, err = s.wdb.ExecContext(ctx, `UPDATE leadership SET until = 0 WHERE id = 1 AND holder = ? AND term = ?`, holder, term)
	return err
}

func readLeader(ctx context.Context, q querier) (store.Leader, error) {
	var l store.Leader
	var since, until int64
	err := q.QueryRowContext(ctx, `SELECT holder, address, term, since, until FROM leadership WHERE id = 1`).
		Scan(&l.Holder, &l.Address, &l.Term, &since, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Leader{}, nil
	}
	l.Since, l.Until = fromNanos(since), fromNanos(until)
	return l, err
}

// fenceTerm refuses, with store.ErrFenced, a write under a leadership term
// that is no longer the current one. Term 0 is a writer that leads
// nothing (kiln run's engine), and is not fenced by terms. It runs inside
// the write's transaction, which holds the write lock: the term cannot
// change before the commit.
func fenceTerm(ctx context.Context, tx *sql.Tx, term int64) error {
	if term == 0 {
		return nil
	}
	var cur int64
	err := tx.QueryRowContext(ctx, `SELECT term FROM leadership WHERE id = 1`).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if cur != term {
		return fmt.Errorf("written under term %d, while term %d leads: %w", term, cur, store.ErrFenced)
	}
	return nil
}
