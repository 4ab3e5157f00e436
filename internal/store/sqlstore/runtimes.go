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

// PutRuntime implements store.Runtimes.
func (s *Store) PutRuntime(ctx context.Context, p store.PutRuntimeParams) (_ *apiv1.TrainingRuntime, changed bool, err error) {
	defer s.coded(&err)
	rt := p.Runtime
	k := store.RuntimeKey{Kind: rt.Kind, Project: store.RuntimeProject(rt.Kind, p.Project), Name: rt.Metadata.Name}
	meta, spec := mustJSON(rt.Metadata), mustJSON(rt.Spec)
	var out *apiv1.TrainingRuntime
	err = s.withTx(ctx, func(tx *sql.Tx) error {
		cur, err := currentRuntime(ctx, tx, k)
		if err != nil {
			return err
		}
		if cur != nil && cur.meta == meta && cur.spec == spec {
			out, err = readRuntime(ctx, tx, k, cur.version, cur.createdAt)
			return err
		}
		changed = true
		version, createdAt := int64(1), p.Now.UnixNano()
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) + 1 FROM training_runtime_versions
			WHERE kind = ? AND project = ? AND name = ?`, k.Kind, k.Project, k.Name).Scan(&version); err != nil {
			return err
		}
		if cur != nil {
			createdAt = cur.createdAt
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO training_runtime_versions (kind, project, name, version, metadata, spec, created_at)
			VALUES (?,?,?,?,?,?,?)`, k.Kind, k.Project, k.Name, version, meta, spec, p.Now.UnixNano()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO training_runtimes (kind, project, name, version, created_at) VALUES (?,?,?,?,?)
			ON CONFLICT (kind, project, name) DO UPDATE SET version = excluded.version`,
			k.Kind, k.Project, k.Name, version, createdAt); err != nil {
			return err
		}
		out, err = readRuntime(ctx, tx, k, version, createdAt)
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("storing %s %s: %w", k.Kind, runtimeName(k), err)
	}
	return out, changed, nil
}

// current is the current version of a runtime, as stored.
type current struct {
	version, createdAt int64
	meta, spec         string
}

// currentRuntime returns the current version of k, or nil if none.
func currentRuntime(ctx context.Context, tx *sql.Tx, k store.RuntimeKey) (*current, error) {
	c := &current{}
	err := tx.QueryRowContext(ctx, `SELECT r.version, r.created_at, v.metadata, v.spec FROM training_runtimes r
		JOIN training_runtime_versions v USING (kind, project, name, version)
		WHERE r.kind = ? AND r.project = ? AND r.name = ?`, k.Kind, k.Project, k.Name).Scan(&c.version, &c.createdAt, &c.meta, &c.spec)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return c, err
}

// querier is what reads need of a *sql.DB or a *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readRuntime reads version of k; createdAt is when the runtime was
// created (0: when that version was).
func readRuntime(ctx context.Context, q querier, k store.RuntimeKey, version, createdAt int64) (*apiv1.TrainingRuntime, error) {
	row := q.QueryRowContext(ctx, `SELECT kind, project, version, metadata, spec, created_at FROM training_runtime_versions
		WHERE kind = ? AND project = ? AND name = ? AND version = ?`, k.Kind, k.Project, k.Name, version)
	rt, err := scanRuntime(row.Scan)
	if err != nil {
		return nil, err
	}
	if createdAt != 0 {
		rt.Status.CreatedAt = fromNanos(createdAt)
	}
	return rt, nil
}

// Runtime implements store.Runtimes.
func (s *Store) Runtime(ctx context.Context, k store.RuntimeKey) (_ *apiv1.TrainingRuntime, err error) {
	defer s.coded(&err)
	k.Project = store.RuntimeProject(k.Kind, k.Project)
	version, createdAt := k.Version, int64(0)
	if version == 0 {
		err = s.queryReadRow(ctx, `SELECT version, created_at FROM training_runtimes WHERE kind = ? AND project = ? AND name = ?`,
			k.Kind, k.Project, k.Name).Scan(&version, &createdAt)
	}
	var rt *apiv1.TrainingRuntime
	if err == nil {
		rt, err = readRuntime(ctx, prepared{s}, k, version, createdAt)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s %s: %w", k.Kind, runtimeName(k), store.ErrNotFound)
	}
	return rt, err
}

// ListRuntimes implements store.Runtimes.
func (s *Store) ListRuntimes(ctx context.Context, project string) (_ []*apiv1.TrainingRuntime, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT v.kind, v.project, v.version, v.metadata, v.spec, v.created_at, r.created_at
		FROM training_runtimes r JOIN training_runtime_versions v USING (kind, project, name, version)
		WHERE (r.kind = ? AND r.project = '') OR (r.kind = ? AND r.project = ?)
		ORDER BY r.kind, r.name`, apiv1.KindClusterTrainingRuntime, apiv1.KindTrainingRuntime, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*apiv1.TrainingRuntime{}
	for rows.Next() {
		var created int64
		rt, err := scanRuntime(func(dest ...any) error { return rows.Scan(append(dest, &created)...) })
		if err != nil {
			return nil, err
		}
		rt.Status.CreatedAt = fromNanos(created)
		out = append(out, rt)
	}
	return out, rows.Err()
}

func scanRuntime(scan func(...any) error) (*apiv1.TrainingRuntime, error) {
	var meta, spec string
	var updated int64
	rt := &apiv1.TrainingRuntime{TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.APIVersion}, Status: &apiv1.RuntimeStatus{Source: apiv1.RuntimeSourceStored}}
	if err := scan(&rt.Kind, &rt.Status.Project, &rt.Status.Version, &meta, &spec, &updated); err != nil {
		return nil, err
	}
	rt.Status.CreatedAt, rt.Status.UpdatedAt = fromNanos(updated), fromNanos(updated)
	if err := errors.Join(json.Unmarshal([]byte(meta), &rt.Metadata), json.Unmarshal([]byte(spec), &rt.Spec)); err != nil {
		return nil, fmt.Errorf("reading %s %s version %d: %w", rt.Kind, rt.Metadata.Name, rt.Status.Version, err)
	}
	return rt, nil
}

// DeleteRuntime implements store.Runtimes.
func (s *Store) DeleteRuntime(ctx context.Context, k store.RuntimeKey) (err error) {
	defer s.coded(&err)
	k.Project = store.RuntimeProject(k.Kind, k.Project)
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM training_runtimes WHERE kind = ? AND project = ? AND name = ?`, k.Kind, k.Project, k.Name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s %s: %w", k.Kind, runtimeName(k), store.ErrNotFound)
	}
	return nil
}

// runtimeName is k's project and name, as errors say it.
func runtimeName(k store.RuntimeKey) string {
	if k.Project == "" {
		return k.Name
	}
	return k.Project + "/" + k.Name
}
