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

// checkApply is CheckApply over project's stored templates and runtimes.
func (a *App) checkApply(ctx context.Context, project string, names []string, docs []workflow.Document) (*workflow.Applying, []*apiv1.Schedule, error) {
	return CheckApply(project, names, docs, Lookups{Templates: a.storedTemplates(ctx, project), Runtimes: a.storedRuntimes(ctx, project)})
}

// Lookups find what a check of kiln apply's files reads from a project's
// store: its WorkflowTemplates and its runtimes. A nil lookup finds
// nothing, as a check of the files alone does.
type Lookups struct {
	// Templates finds a stored WorkflowTemplate by name (nil, nil: none).
	Templates workflow.Stored
	// Runtimes finds a stored runtime by kind and name (nil, nil: none).
	Runtimes workflow.StoredRuntimes
}

// CheckApply is workflow.CheckApply for the documents of kiln apply that
// are not Schedules, and checks the Schedules: their own fields, and the
// workflow each runs, with the templates of the files and those look
// finds. It stores nothing: kiln apply stores what it returns, kiln
// validate only says what it found. project names the project in errors.
func CheckApply(project string, names []string, docs []workflow.Document, look Lookups) (*workflow.Applying, []*apiv1.Schedule, error) {
	var rest, scheds []workflow.Document
	for _, d := range docs {
		if d.Kind == apiv1.KindSchedule && d.APIVersion == apiv1.APIVersion {
			scheds = append(scheds, d)
		} else {
			rest = append(rest, d)
		}
	}
	got := &workflow.Applying{}
	var err error
	if len(rest) > 0 || len(scheds) == 0 {
		got, err = workflow.CheckApply(names, rest, look.Templates, look.Runtimes)
	}
	var applied []*apiv1.WorkflowTemplate
	if got != nil {
		applied = got.Templates
	}
	out, serr := CheckSchedules(project, scheds, applied, look)
	return got, out, errors.Join(err, workflow.AsWritten(scheds, serr))
}

// CheckSchedules decodes and checks Schedule documents; a template they
// run must be among applied or found by look in project.
func CheckSchedules(project string, docs []workflow.Document, applied []*apiv1.WorkflowTemplate, look Lookups) ([]*apiv1.Schedule, error) {
	byName := map[string]*apiv1.WorkflowTemplate{}
	for _, t := range applied {
		byName[t.Metadata.Name] = t
	}
	var out []*apiv1.Schedule
	var errs []error
	seen := map[string]bool{}
	for i := range docs {
		d := &docs[i]
		s, err := workflow.DecodeSchedule(d)
		if s == nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, err, placed(d, schedule.Check(s)))
		if seen[s.Metadata.Name] {
			errs = append(errs, placed(d, &apiv1.Error{Code: apiv1.CodeDuplicate, Field: "metadata.name", Message: fmt.Sprintf("Schedule %q is in the files twice", s.Metadata.Name)}))
		}
		seen[s.Metadata.Name] = true
		errs = append(errs, checkScheduleTarget(projectOf(project), d, s, byName, look))
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}

// checkScheduleTarget checks what a schedule runs: its inline workflow
// compiles, or its template exists; and that its params are those the
// workflow declares, with a value for each it requires.
func checkScheduleTarget(project string, d *workflow.Document, s *apiv1.Schedule, applied map[string]*apiv1.WorkflowTemplate, look Lookups) error {
	switch {
	case s.Spec.Workflow != nil && s.Spec.WorkflowTemplateRef == nil:
		if err := workflow.CheckScheduleWorkflow(d, s, look.Templates, look.Runtimes); err != nil {
			return err
		}
		return workflow.CheckScheduleParams(d, s, *s.Spec.Workflow, "its spec.workflow")
	case s.Spec.WorkflowTemplateRef != nil && s.Spec.WorkflowTemplateRef.Name != "":
		name := s.Spec.WorkflowTemplateRef.Name
		spec, err := scheduleTemplate(name, applied, look.Templates)
		if err != nil {
			return err
		}
		if spec == nil {
			return placed(d, noScheduleTemplate(project, name, look.Templates == nil))
		}
		return workflow.CheckScheduleParams(d, s, *spec, fmt.Sprintf("WorkflowTemplate %q", name))
	}
	return nil
}

// noScheduleTemplate says that a schedule's template is missing: from
// project, or from the files when they were checked alone.
func noScheduleTemplate(project, name string, filesAlone bool) *apiv1.Error {
	e := &apiv1.Error{
		Code: apiv1.CodeScheduleRef, Field: "spec.workflowTemplateRef.name",
		Message: fmt.Sprintf("project %q has no WorkflowTemplate %q", project, name),
	}
	if filesAlone {
		e.Message = fmt.Sprintf("no WorkflowTemplate %q is in the files", name)
		e.Hint = "add the template to the files, or check with --project P to look among P's stored templates"
	}
	return e
}

// scheduleTemplate is the spec of the template name as a schedule applied
// now runs it: applied in the same files, or else stored (nil: neither).
func scheduleTemplate(name string, applied map[string]*apiv1.WorkflowTemplate, stored workflow.Stored) (*apiv1.WorkflowSpec, error) {
	if t := applied[name]; t != nil {
		return &t.Spec, nil
	}
	if stored == nil {
		return nil, nil
	}
	w, err := stored(name)
	if w == nil || err != nil {
		return nil, err
	}
	return &w.Spec, nil
}

// placed names d's file and object in the coded errors of err.
func placed(d *workflow.Document, err error) error {
	for _, e := range apiv1.Errors(err) {
		if e.File == "" && e.Object == "" {
			e.File, e.Object = d.File, d.Object()
		}
	}
	return err
}

// applySchedules stores checked schedules in project and adds what it did
// to res. A schedule that exists keeps its status: the ticks it dealt
// with are not dealt with again.
func (a *App) applySchedules(ctx context.Context, project string, scheds []*apiv1.Schedule, now time.Time, res *apiv1.ApplyResult) (*apiv1.ApplyResult, error) {
	for _, s := range scheds {
		stored, err := a.Store.PutSchedule(ctx, store.PutScheduleParams{Project: project, Schedule: s, Now: now})
		if err != nil {
			return res, err
		}
		action := apiv1.ApplyCreated
		if !stored.Status.CreatedAt.Equal(stored.Status.UpdatedAt) {
			action = apiv1.ApplyReplaced
		}
		res.Items = append(res.Items, apiv1.Applied{Kind: apiv1.KindSchedule, Name: s.Metadata.Name, Project: project, Action: action})
	}
	return res, nil
}

// ListSchedules lists a project's schedules, by name, each with its
// unfinished runs and its next tick.
func (a *App) ListSchedules(ctx context.Context, project string) ([]*apiv1.Schedule, error) {
	list, err := a.Store.ListSchedules(ctx, projectOf(project))
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if err := a.readStatus(ctx, s); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// GetSchedule returns a schedule with its unfinished runs and its next
// tick; KLN-3094 if the project has none of that name.
func (a *App) GetSchedule(ctx context.Context, project, name string) (*apiv1.Schedule, error) {
	s, err := a.Store.Schedule(ctx, projectOf(project), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, noSchedule(projectOf(project), name)
	}
	if err != nil {
		return nil, err
	}
	return s, a.readStatus(ctx, s)
}

// DeleteSchedule removes a schedule; KLN-3094 if there is none. The runs
// it started stay.
func (a *App) DeleteSchedule(ctx context.Context, project, name string) error {
	err := a.Store.DeleteSchedule(ctx, projectOf(project), name)
	if errors.Is(err, store.ErrNotFound) {
		return noSchedule(projectOf(project), name)
	}
	return err
}

func noSchedule(project, name string) error {
	return &apiv1.Error{
		Code: apiv1.CodeNoSchedule, Object: "Schedule/" + name,
		Message: fmt.Sprintf("project %q has no Schedule %q", project, name),
	}
}

// readStatus fills what a schedule's status says as it is read: its
// unfinished runs and its next tick.
func (a *App) readStatus(ctx context.Context, s *apiv1.Schedule) error {
	runs, err := a.scheduleRuns(ctx, s, true)
	if err != nil {
		return err
	}
	s.Status.Active = schedule.Active(runs)
	if c, err := schedule.Parse(&s.Spec); err == nil && !s.Spec.Suspend {
		nextTick(s, c)
	}
	return nil
}

// nextTick sets s's next tick as read now, or says that it has none.
func nextTick(s *apiv1.Schedule, c *schedule.Cron) {
	if next := c.Next(time.Now()).UTC(); !next.IsZero() {
		s.Status.NextScheduleTime = &next
		return
	}
	s.Status.Never = true
	if e := apiv1.Errors(schedule.NeverFires(s)); len(e) > 0 {
		s.Status.Code, s.Status.Message = e[0].Code, e[0].Message
	}
}

// scheduleRuns lists the runs s started, newest first; only the
// unfinished ones with unfinished. Its runs are named after it, which
// the store finds by index before it reads their labels.
func (a *App) scheduleRuns(ctx context.Context, s *apiv1.Schedule, unfinished bool) ([]*apiv1.Run, error) {
	return a.Store.ListRuns(ctx, store.ListRunsParams{
		Name: s.Metadata.Name, Label: apiv1.LabelSchedule + "=" + s.Metadata.Name, Projects: []string{s.Status.Project},
		Unfinished: unfinished, Limit: 1000,
	})
}

// SuspendSchedule sets whether a schedule starts runs (spec.suspend),
// keeping the rest of its spec and its status, and returns it;
// KLN-3094 if the project has none of that name. Ticks while it was
// suspended follow startingDeadlineSeconds on resume.
func (a *App) SuspendSchedule(ctx context.Context, project, name string, suspend bool) (*apiv1.Schedule, error) {
	s, err := a.Store.Schedule(ctx, projectOf(project), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, noSchedule(projectOf(project), name)
	}
	if err != nil {
		return nil, err
	}
	s.Spec.Suspend = suspend
	if s, err = a.Store.PutSchedule(ctx, store.PutScheduleParams{Project: projectOf(project), Schedule: s, Now: time.Now()}); err != nil {
		return nil, err
	}
	return s, a.readStatus(ctx, s)
}
