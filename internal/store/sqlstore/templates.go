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

// PutTemplate implements store.Templates.
func (s *Store) PutTemplate(ctx context.Context, p store.PutTemplateParams) (_ *apiv1.WorkflowTemplate, err error) {
	defer s.coded(&err)
	t := p.Template
	var created, updated int64
	err = s.wdb.QueryRowContext(ctx, `INSERT INTO workflow_templates (project, name, metadata, spec, created_at, updated_at)
		VALUES (?,?,?,?,?,?)
		ON CONFLICT (project, name) DO UPDATE SET metadata = excluded.metadata, spec = excluded.spec, updated_at = excluded.updated_at
		RETURNING created_at, updated_at`,
		p.Project, t.Metadata.Name, mustJSON(t.Metadata), mustJSON(t.Spec), p.Now.UnixNano(), p.Now.UnixNano()).Scan(&created, &updated)
	if err != nil {
		return nil, fmt.Errorf("storing template %s/%s: %w", p.Project, t.Metadata.Name, err)
	}
	return &apiv1.WorkflowTemplate{
		TypeMeta: templateType, Metadata: t.Metadata, Spec: t.Spec,
		Status: &apiv1.TemplateStatus{Project: p.Project, CreatedAt: fromNanos(created), UpdatedAt: fromNanos(updated)},
	}, nil
}

var templateType = apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindWorkflowTemplate}

// Template implements store.Templates.
func (s *Store) Template(ctx context.Context, project, name string) (_ *apiv1.WorkflowTemplate, err error) {
	defer s.coded(&err)
	row := s.db.QueryRowContext(ctx, `SELECT metadata, spec, created_at, updated_at FROM workflow_templates
		WHERE project = ? AND name = ?`, project, name)
	t, err := scanTemplate(row.Scan, project)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("template %s/%s: %w", project, name, store.ErrNotFound)
	}
	return t, err
}

// ListTemplates implements store.Templates.
func (s *Store) ListTemplates(ctx context.Context, project string) (_ []*apiv1.WorkflowTemplate, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT metadata, spec, created_at, updated_at FROM workflow_templates
		WHERE project = ? ORDER BY name`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*apiv1.WorkflowTemplate{}
	for rows.Next() {
		t, err := scanTemplate(rows.Scan, project)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func scanTemplate(scan func(...any) error, project string) (*apiv1.WorkflowTemplate, error) {
	var meta, spec string
	var created, updated int64
	if err := scan(&meta, &spec, &created, &updated); err != nil {
		return nil, err
	}
	t := &apiv1.WorkflowTemplate{
		TypeMeta: templateType,
		Status:   &apiv1.TemplateStatus{Project: project, CreatedAt: fromNanos(created), UpdatedAt: fromNanos(updated)},
	}
	if err := errors.Join(json.Unmarshal([]byte(meta), &t.Metadata), json.Unmarshal([]byte(spec), &t.Spec)); err != nil {
		return nil, fmt.Errorf("reading template %s/%s: %w", project, t.Metadata.Name, err)
	}
	return t, nil
}

// DeleteTemplate implements store.Templates.
func (s *Store) DeleteTemplate(ctx context.Context, project, name string) (err error) {
	defer s.coded(&err)
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM workflow_templates WHERE project = ? AND name = ?`, project, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("template %s/%s: %w", project, name, store.ErrNotFound)
	}
	return nil
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
