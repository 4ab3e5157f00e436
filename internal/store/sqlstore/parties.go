package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// partyScope is what a party's sealed credential is bound to, besides
// its name: no project is named so, so a sealed secret value cannot be
// passed off as a party's credential, nor one as the other.
const partyScope = ":party"

// PutParty implements store.Parties.
func (s *Store) PutParty(ctx context.Context, p store.Party) (err error) {
	defer s.coded(&err)
	sealed := ""
	if p.Credential != "" {
		if sealed, err = s.sealer.seal(partyScope, p.Name, p.Credential); err != nil {
			return err
		}
	}
	now := p.UpdatedAt.UnixNano()
	_, err = s.wdb.ExecContext(ctx, `INSERT INTO parties (name, url, project, credential_hash, credential, created_at, updated_at, policy, pin)
		VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (name) DO UPDATE SET url = excluded.url, project = excluded.project,
		credential_hash = excluded.credential_hash, credential = excluded.credential, updated_at = excluded.updated_at,
		policy = excluded.policy, pin = excluded.pin`,
		p.Name, p.URL, p.Project, p.CredentialHash, sealed, now, now, policyJSON(p.Policy), p.Pin)
	if err != nil && s.dialect.IsConflict(err) {
		return fmt.Errorf("party %s: its credential is another party's: %w", p.Name, store.ErrConflict)
	}
	return err
}

const partyColumns = `name, url, project, credential_hash, credential, created_at, updated_at, policy, pin`

// scanParty reads a party's row and opens its sealed credential.
func (s *Store) scanParty(row interface{ Scan(...any) error }) (*store.Party, error) {
	var p store.Party
	var created, updated int64
	var policy string
	if err := row.Scan(&p.Name, &p.URL, &p.Project, &p.CredentialHash, &p.Credential, &created, &updated, &policy, &p.Pin); err != nil {
		return nil, err
	}
	if policy != "" {
		p.Policy = &apiv1.PartyPolicy{}
		if err := json.Unmarshal([]byte(policy), p.Policy); err != nil {
			return nil, err
		}
	}
	p.CreatedAt, p.UpdatedAt = fromNanos(created), fromNanos(updated)
	if p.Credential == "" {
		return &p, nil
	}
	var err error
	p.Credential, err = s.sealer.open(partyScope, p.Name, p.Credential)
	return &p, err
}

// GetParty implements store.Parties.
func (s *Store) GetParty(ctx context.Context, name string) (_ *store.Party, err error) {
	defer s.coded(&err)
	p, err := s.scanParty(s.db.QueryRowContext(ctx, `SELECT `+partyColumns+` FROM parties WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("party %s: %w", name, store.ErrNotFound)
	}
	return p, err
}

// PartyByCredential implements store.Parties.
func (s *Store) PartyByCredential(ctx context.Context, hash string) (_ *store.Party, err error) {
	defer s.coded(&err)
	p, err := s.scanParty(s.db.QueryRowContext(ctx, `SELECT `+partyColumns+` FROM parties WHERE credential_hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return p, err
}

// ListParties implements store.Parties.
func (s *Store) ListParties(ctx context.Context) (_ []store.Party, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT `+partyColumns+` FROM parties ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Party{}
	for rows.Next() {
		p, err := s.scanParty(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *p)
	}
	return out, rows.Err()
}

// DeleteParty implements store.Parties.
func (s *Store) DeleteParty(ctx context.Context, name string) (err error) {
	defer s.coded(&err)
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM parties WHERE name = ?`, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("party %s: %w", name, store.ErrNotFound)
	}
	return nil
}

// policyJSON is a party's policy as stored: "" for none.
func policyJSON(p *apiv1.PartyPolicy) string {
	if p == nil {
		return ""
	}
	return mustJSON(p)
}
