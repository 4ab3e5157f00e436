package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"kiln.dev/kiln/internal/store"
)

// SetSecret implements store.Secrets.
func (s *Store) SetSecret(ctx context.Context, project, name, value string) (err error) {
	defer s.coded(&err)
	if value, err = s.sealer.seal(project, name, value); err != nil {
		return err
	}
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO secrets (project, name, value, updated_at) VALUES (?,?,?,?)
		ON CONFLICT (project, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		project, name, value, time.Now().UnixNano())
	return err
}

// Secret implements store.Secrets.
func (s *Store) Secret(ctx context.Context, project, name string) (_ string, err error) {
	defer s.coded(&err)
	var v string
	err = s.db.QueryRowContext(ctx, `SELECT value FROM secrets WHERE project = ? AND name = ?`, project, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("secret %s/%s: %w", project, name, store.ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	return s.sealer.open(project, name, v)
}

// SecretNames implements store.Secrets.
func (s *Store) SecretNames(ctx context.Context, project string) (_ []string, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT name FROM secrets WHERE project = ? ORDER BY name`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// DeleteSecret implements store.Secrets.
func (s *Store) DeleteSecret(ctx context.Context, project, name string) (err error) {
	defer s.coded(&err)
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM secrets WHERE project = ? AND name = ?`, project, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("secret %s/%s: %w", project, name, store.ErrNotFound)
	}
	return nil
}
