package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// PutQuota implements store.Quotas: one conditional upsert, which leaves
// an unchanged spec (and its updated_at) alone.
func (s *Store) PutQuota(ctx context.Context, q apiv1.ProjectQuota, now time.Time) (_ bool, err error) {
	defer s.coded(&err)
	spec, err := json.Marshal(q.Spec)
	if err != nil {
		return false, err
	}
	at := now.UnixNano()
	res, err := s.wdb.ExecContext(ctx, `INSERT INTO project_quotas (project, spec, created_at, updated_at) VALUES (?,?,?,?)
		ON CONFLICT (project) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at
		WHERE project_quotas.spec <> excluded.spec`, q.Metadata.Name, string(spec), at, at)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

const quotaColumns = `project, spec, created_at, updated_at`

func scanQuota(row interface{ Scan(...any) error }) (*apiv1.ProjectQuota, error) {
	q := apiv1.ProjectQuota{APIVersion: apiv1.APIVersion, Kind: apiv1.KindProjectQuota}
	var spec string
	var created, updated int64
	if err := row.Scan(&q.Metadata.Name, &spec, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(spec), &q.Spec); err != nil {
		return nil, fmt.Errorf("quota of project %s: %w", q.Metadata.Name, err)
	}
	q.Status.CreatedAt, q.Status.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &q, nil
}

// GetQuota implements store.Quotas.
func (s *Store) GetQuota(ctx context.Context, project string) (_ *apiv1.ProjectQuota, err error) {
	defer s.coded(&err)
	q, err := scanQuota(s.db.QueryRowContext(ctx, `SELECT `+quotaColumns+` FROM project_quotas WHERE project = ?`, project))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("quota of project %s: %w", project, store.ErrNotFound)
	}
	return q, err
}

// ListQuotas implements store.Quotas.
func (s *Store) ListQuotas(ctx context.Context) (_ []apiv1.ProjectQuota, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT `+quotaColumns+` FROM project_quotas ORDER BY project`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []apiv1.ProjectQuota{}
	for rows.Next() {
		q, err := scanQuota(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *q)
	}
	return out, rows.Err()
}

// DeleteQuota implements store.Quotas.
func (s *Store) DeleteQuota(ctx context.Context, project string) (err error) {
	defer s.coded(&err)
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM project_quotas WHERE project = ?`, project)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("quota of project %s: %w", project, store.ErrNotFound)
	}
	return nil
}
