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

var scheduleType = apiv1.TypeMeta{APIVersion: apiv1.APIVersion, Kind: apiv1.KindSchedule}

const scheduleColumns = `project, metadata, spec, status, created_at, updated_at`

// PutSchedule implements store.Schedules.
func (s *Store) PutSchedule(ctx context.Context, p store.PutScheduleParams) (_ *apiv1.Schedule, err error) {
	defer s.coded(&err)
	sc := p.Schedule
	row := s.wdb.QueryRowContext(ctx, `INSERT INTO schedules (project, name, metadata, spec, created_at, updated_at)
		VALUES (?,?,?,?,?,?)
		ON CONFLICT (project, name) DO UPDATE SET metadata = excluded.metadata, spec = excluded.spec, updated_at = excluded.updated_at
		RETURNING `+scheduleColumns,
		p.Project, sc.Metadata.Name, mustJSON(sc.Metadata), mustJSON(sc.Spec), p.Now.UnixNano(), p.Now.UnixNano())
	out, err := scanSchedule(row.Scan)
	if err != nil {
		return nil, fmt.Errorf("storing schedule %s/%s: %w", p.Project, sc.Metadata.Name, err)
	}
	return out, nil
}

// Schedule implements store.Schedules.
func (s *Store) Schedule(ctx context.Context, project, name string) (_ *apiv1.Schedule, err error) {
	defer s.coded(&err)
	row := s.db.QueryRowContext(ctx, `SELECT `+scheduleColumns+` FROM schedules WHERE project = ? AND name = ?`, project, name)
	sc, err := scanSchedule(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("schedule %s/%s: %w", project, name, store.ErrNotFound)
	}
	return sc, err
}

// ListSchedules implements store.Schedules.
func (s *Store) ListSchedules(ctx context.Context, project string) (_ []*apiv1.Schedule, err error) {
	defer s.coded(&err)
	rows, err := s.db.QueryContext(ctx, `SELECT `+scheduleColumns+` FROM schedules
		WHERE project = ? OR ? = '' ORDER BY project, name`, project, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*apiv1.Schedule{}
	for rows.Next() {
		sc, err := scanSchedule(rows.Scan)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

func scanSchedule(scan func(...any) error) (*apiv1.Schedule, error) {
	var project, meta, spec, status string
	var created, updated int64
	if err := scan(&project, &meta, &spec, &status, &created, &updated); err != nil {
		return nil, err
	}
	sc := &apiv1.Schedule{TypeMeta: scheduleType, Status: &apiv1.ScheduleStatus{}}
	err := errors.Join(json.Unmarshal([]byte(meta), &sc.Metadata), json.Unmarshal([]byte(spec), &sc.Spec), json.Unmarshal([]byte(status), sc.Status))
	if err != nil {
		return nil, fmt.Errorf("reading schedule %s/%s: %w", project, sc.Metadata.Name, err)
	}
	sc.Status.Project, sc.Status.CreatedAt, sc.Status.UpdatedAt = project, fromNanos(created), fromNanos(updated)
	return sc, nil
}

// DeleteSchedule implements store.Schedules.
func (s *Store) DeleteSchedule(ctx context.Context, project, name string) (err error) {
	defer s.coded(&err)
	res, err := s.wdb.ExecContext(ctx, `DELETE FROM schedules WHERE project = ? AND name = ?`, project, name)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("schedule %s/%s: %w", project, name, store.ErrNotFound)
	}
	return nil
}

// SetScheduleStatus implements store.Schedules: one conditional update,
// so that of two leaders the one that dealt with the later tick wins.
func (s *Store) SetScheduleStatus(ctx context.Context, project, name string, st *apiv1.ScheduleStatus) (_ bool, err error) {
	defer s.coded(&err)
	kept := *st
	kept.Project, kept.CreatedAt, kept.UpdatedAt, kept.Active, kept.NextScheduleTime = "", time.Time{}, time.Time{}, nil, nil
	tick := nanos(st.LastTick)
	res, err := s.wdb.ExecContext(ctx, `UPDATE schedules SET status = ?, last_tick = ?
		WHERE project = ? AND name = ? AND (last_tick IS NULL OR last_tick <= ?)`,
		mustJSON(kept), tick, project, name, tick.Int64)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return true, nil
	}
	if _, err := s.Schedule(ctx, project, name); err != nil {
		return false, err
	}
	return false, nil
}
