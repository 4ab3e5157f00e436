package sqlstore

import (
	"context"
	"database/sql"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// ClaimRuns implements store.Leaser.
func (s *Store) ClaimRuns(ctx context.Context, p store.ClaimRunsParams) (_ []store.Claim, err error) {
	defer s.coded(&err)
	type holder struct {
		id    apiv1.RunID
		owner string
		until int64
		term  int64
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, owner, lease_until, lease_term FROM runs WHERE done = 0 ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	var candidates []holder
	for rows.Next() {
		var h holder
		if err := rows.Scan(&h.id, &h.owner, &h.until, &h.term); err != nil {
			rows.Close()
			return nil, err
		}
		if len(p.IDs) > 0 && !slices.Contains(p.IDs, h.id) {
			continue
		}
		free := h.owner == "" || h.owner == p.Owner || h.until < p.Now.UnixNano() || (p.IsDead != nil && p.IsDead(h.owner)) ||
			(h.term > 0 && h.term < p.Term)
		if free {
			candidates = append(candidates, h)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var claimed []store.Claim
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		if err := fenceTerm(ctx, tx, p.Term); err != nil {
			return err
		}
		for _, h := range candidates {
			res, err := tx.ExecContext(ctx, `UPDATE runs SET owner = ?, lease_until = ?, lease_term = ?
				WHERE id = ? AND owner = ? AND lease_until = ? AND lease_term = ?`,
				p.Owner, p.Until.UnixNano(), p.Term, h.id, h.owner, h.until, h.term)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				claimed = append(claimed, store.Claim{ID: h.id, From: h.owner})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return claimed, nil
}

// RenewLeases implements store.Leaser.
func (s *Store) RenewLeases(ctx context.Context, p store.RenewLeasesParams) (_ []store.Request, err error) {
	defer s.coded(&err)
	var reqs []store.Request
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET lease_until = ? WHERE owner = ? AND done = 0`, p.Until.UnixNano(), p.Owner); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE cache_reservations SET until = ? WHERE owner = ?`, p.Until.UnixNano(), p.Owner); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, cancel_requested, suspend FROM runs WHERE owner = ? AND done = 0 ORDER BY id`, p.Owner)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r store.Request
			var asked int
			if err := rows.Scan(&r.Run, &asked, &r.Suspend); err != nil {
				return err
			}
			r.Cancel, r.Stop = asked == 1, asked == 2
			reqs = append(reqs, r)
		}
		return rows.Err()
	})
	return reqs, err
}

// ReleaseLease implements store.Leaser.
func (s *Store) ReleaseLease(ctx context.Context, id apiv1.RunID, owner string) (err error) {
	defer s.coded(&err)
	_, err = s.wdb.ExecContext(ctx, `UPDATE runs SET owner = '', lease_until = 0 WHERE id = ? AND owner = ?`, id, owner)
	return err
}
