package store

import (
	"context"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Schedules keeps Schedules, per project: cron schedules whose ticks the
// leader turns into runs (internal/schedule).
type Schedules interface {
	// PutSchedule creates or replaces the schedule of p.Project named
	// p.Schedule.Metadata.Name, and returns it as stored: a replaced
	// schedule keeps its status and CreatedAt, and its UpdatedAt becomes
	// p.Now.
	PutSchedule(ctx context.Context, p PutScheduleParams) (*apiv1.Schedule, error)
	// Schedule returns a schedule of project with its stored status, or
	// ErrNotFound.
	Schedule(ctx context.Context, project, name string) (*apiv1.Schedule, error)
	// ListSchedules returns a project's schedules by name, or every
	// project's (project empty) by project and name.
	ListSchedules(ctx context.Context, project string) ([]*apiv1.Schedule, error)
	// DeleteSchedule removes a schedule, or returns ErrNotFound. The runs
	// it started stay.
	DeleteSchedule(ctx context.Context, project, name string) error
	// SetScheduleStatus stores what the leader did with a schedule, unless
	// the stored status has dealt with a later tick (LastTick) already: a
	// status never goes back. It reports whether it stored it, and
	// returns ErrNotFound for a schedule that is gone. CreatedAt and
	// UpdatedAt are the store's and are not changed.
	SetScheduleStatus(ctx context.Context, project, name string, st *apiv1.ScheduleStatus) (bool, error)
}

// PutScheduleParams is a schedule to store.
type PutScheduleParams struct {
	Project  string
	Schedule *apiv1.Schedule
	Now      time.Time
}
