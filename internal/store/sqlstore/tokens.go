package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"kiln.dev/kiln/internal/store"
)

// CreateToken implements store.Tokens.
func (s *Store) CreateToken(ctx context.Context, t store.Token) (err error) {
	defer s.coded(&err)
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO tokens (id, name, hash, role, projects, created_at) VALUES (?,?,?,?,?,?)`,
		t.ID, t.Name, t.Hash, t.Role, mustJSON(t.Projects), t.CreatedAt.UnixNano())
	if err != nil && s.dialect.IsConflict(err) {
		return fmt.Errorf("token %s: %w", t.ID, store.ErrConflict)
	}
	return err
}

const tokenColumns = `id, name, hash, role, projects, created_at, revoked`

func scanToken(row interface{ Scan(...any) error }) (*store.Token, error) {
	var t store.Token
	var projects string
	var created int64
	if err := row.Scan(&t.ID, &t.Name, &t.Hash, &t.Role, &projects, &created, &t.Revoked); err != nil {
		return nil, err
	}
	t.CreatedAt = *timeOf(sql.NullInt64{Int64: created, Valid: true})
	return &t, json.Unmarshal([]byte(projects), &t.Projects)
}

// TokenByHash implements store.Tokens.
func (s *Store) TokenByHash(ctx context.Context, hash string) (_ *store.Token, err error) {
	defer s.coded(&err)
	t, err := scanToken(s.queryReadRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = ? AND revoked = 0`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return t, err
}

// ListTokens implements store.Tokens.
func (s *Store) ListTokens(ctx context.Context) (_ []store.Token, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// RevokeToken implements store.Tokens.
func (s *Store) RevokeToken(ctx context.Context, id string) (err error) {
	defer s.coded(&err)
	res, err := s.wdb.ExecContext(ctx, `UPDATE tokens SET revoked = 1 WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("token %s: %w", id, store.ErrNotFound)
	}
	return nil
}
