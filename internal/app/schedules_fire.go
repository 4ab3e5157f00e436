package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/schedule"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/workflow"
)

// scheduleRunner is the engine as the schedule loop uses it: a tick's
// run goes the way of every submitted run.
type scheduleRunner struct{ a *App }

var _ schedule.Runner = scheduleRunner{}

// Start implements schedule.Runner.
func (r scheduleRunner) Start(ctx context.Context, s *apiv1.Schedule, tick time.Time) (apiv1.RunID, error) {
	id := schedule.RunID(s.Status.Project, s.Metadata.Name, tick)
	spec, err := r.a.scheduleSpec(ctx, s)
	if err != nil {
		return id, err
	}
	sub := apiv1.Submission{
		Files:  []apiv1.SourceFile{workflow.ScheduleSource(s, spec, tick)},
		Params: s.Spec.Params, Project: s.Status.Project,
	}
	_, err = r.a.submit(ctx, sub, id)
	return id, err
}

// Runs implements schedule.Runner.
func (r scheduleRunner) Runs(ctx context.Context, s *apiv1.Schedule) ([]*apiv1.Run, error) {
	return r.a.scheduleRuns(ctx, s, false)
}

// Cancel implements schedule.Runner.
func (r scheduleRunner) Cancel(ctx context.Context, id apiv1.RunID) error { return r.a.Cancel(ctx, id) }

// Delete implements schedule.Runner with the collector's deletion.
func (r scheduleRunner) Delete(ctx context.Context, id apiv1.RunID) error {
	return r.a.GC.Delete(ctx, id)
}

// scheduleSpec is the spec of the Workflow a schedule runs: its own, or
// its template's as stored now.
func (a *App) scheduleSpec(ctx context.Context, s *apiv1.Schedule) (apiv1.WorkflowSpec, error) {
	if s.Spec.Workflow != nil {
		return *s.Spec.Workflow, nil
	}
	name := s.Spec.WorkflowTemplateRef.Name
	t, err := a.Store.Template(ctx, s.Status.Project, name)
	if errors.Is(err, store.ErrNotFound) {
		return apiv1.WorkflowSpec{}, &apiv1.Error{
			Code: apiv1.CodeScheduleRef, Object: "Schedule/" + s.Metadata.Name, Field: "spec.workflowTemplateRef.name",
			Message: fmt.Sprintf("project %q has no WorkflowTemplate %q any more", s.Status.Project, name),
		}
	}
	if err != nil {
		return apiv1.WorkflowSpec{}, err
	}
	return t.Spec, nil
}

// runSchedules fires the schedules of every project until ctx ends, when
// the app was configured to (kiln serve), and closes the channel it
// returns once it stopped.
func (a *App) runSchedules(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if a.schedules {
			schedule.New(schedule.Config{Store: a.Store, Runner: scheduleRunner{a}, Log: a.log}).Run(ctx)
		}
	}()
	return done
}
