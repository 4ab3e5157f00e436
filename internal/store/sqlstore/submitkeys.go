package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// GetSubmitKey implements store.SubmitKeys.
func (s *Store) GetSubmitKey(ctx context.Context, project, key string, since time.Time) (_ *store.SubmitKey, err error) {
	defer s.coded(&err)
	k := store.SubmitKey{Project: project, Key: key}
	var created int64
	err = s.db.QueryRowContext(ctx, `SELECT digest, run_id, created_at FROM submit_keys
		WHERE project = ? AND idem_key = ? AND created_at >= ?`, project, key, since.UnixNano()).Scan(&k.Digest, &k.Run, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("submission key %q of project %s: %w", key, project, store.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	k.CreatedAt = time.Unix(0, created).UTC()
	return &k, nil
}

// putSubmitKey stores run r's submission key, if it has one, in tx: keys
// expired before k.Since go first, and a key the project holds still is
// store.ErrKeyTaken. Two transactions storing one key at once both
// insert it; the primary key lets one commit.
func (s *Store) putSubmitKey(ctx context.Context, tx *sql.Tx, project string, r *apiv1.Run, k *store.NewSubmitKey) error {
	if k == nil {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM submit_keys WHERE created_at < ?`, k.Since.UnixNano()); err != nil {
		return fmt.Errorf("removing expired submission keys: %w", err)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO submit_keys (project, idem_key, digest, run_id, created_at) VALUES (?,?,?,?,?)`,
		project, k.Key, k.Digest, r.ID, r.CreatedAt.UnixNano())
	if err != nil && s.dialect.IsConflict(err) {
		return fmt.Errorf("submission key %q of project %s: %w", k.Key, project, store.ErrKeyTaken)
	}
	return err
}
