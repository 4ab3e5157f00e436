package server

import (
	"context"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ScheduleKeeper keeps a project's Schedules (stored with POST
// /api/v1/apply); the embedded engine (internal/app) is one. Errors are
// coded: KLN-3094 for a schedule the project does not have.
type ScheduleKeeper interface {
	// ListSchedules lists a project's schedules, each with its
	// unfinished runs and next tick.
	ListSchedules(ctx context.Context, project string) ([]*apiv1.Schedule, error)
	GetSchedule(ctx context.Context, project, name string) (*apiv1.Schedule, error)
	// DeleteSchedule removes a schedule; the runs it started stay.
	DeleteSchedule(ctx context.Context, project, name string) error
	// SuspendSchedule sets the schedule's spec.suspend and returns it.
	SuspendSchedule(ctx context.Context, project, name string, suspend bool) (*apiv1.Schedule, error)
}

// scheduleRoutes are the routes of Schedules.
func (s *Server) scheduleRoutes() []route {
	return []route{
		{"GET /api/v1/schedules", viewer, s.listSchedules},
		{"GET /api/v1/schedules/{name}", viewer, s.getSchedule},
		{"DELETE /api/v1/schedules/{name}", editor, s.deleteSchedule},
		{"POST /api/v1/schedules/{name}/suspend", editor, s.suspendSchedule(true)},
		{"POST /api/v1/schedules/{name}/unsuspend", editor, s.suspendSchedule(false)},
	}
}

// schedules is the keeper, or a 404 when the server keeps none.
func (s *Server) schedules() (ScheduleKeeper, error) {
	if s.cfg.Schedules == nil {
		return nil, &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeBadRequest, "this server keeps no schedules")}
	}
	return s.cfg.Schedules, nil
}

// schedulesOf is the keeper and the project a request names, which p
// must be allowed; a 404 when the server keeps no schedules.
func (s *Server) schedulesOf(r *http.Request, p *principal) (ScheduleKeeper, string, error) {
	project, err := queryProject(r, p)
	if err != nil {
		return nil, "", err
	}
	k, err := s.schedules()
	return k, project, err
}

func (s *Server) listSchedules(w http.ResponseWriter, r *http.Request, p *principal) error {
	k, project, err := s.schedulesOf(r, p)
	if err != nil {
		return err
	}
	items, err := k.ListSchedules(r.Context(), project)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.ScheduleList{Project: project, Items: nonNil(items)})
	return nil
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request, p *principal) error {
	k, project, err := s.schedulesOf(r, p)
	if err != nil {
		return err
	}
	sc, err := k.GetSchedule(r.Context(), project, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sc)
	return nil
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request, p *principal) error {
	k, project, err := s.schedulesOf(r, p)
	if err != nil {
		return err
	}
	if err := k.DeleteSchedule(r.Context(), project, r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// suspendSchedule suspends (suspend) or resumes a schedule, and answers
// with it.
func (s *Server) suspendSchedule(suspend bool) func(http.ResponseWriter, *http.Request, *principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		k, project, err := s.schedulesOf(r, p)
		if err != nil {
			return err
		}
		sc, err := k.SuspendSchedule(r.Context(), project, r.PathValue("name"), suspend)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, sc)
		return nil
	}
}
