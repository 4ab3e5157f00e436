package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/training"
	"kiln.dev/kiln/internal/workflow"
)

// Apply checks the objects of in.Files (WorkflowTemplates, Schedules,
// TrainingRuntimes, ClusterTrainingRuntimes) and stores each in
// in.Project (empty: the documents' namespace, see projectFor), or for
// every project, and says what it did with each: runtimes first, then
// templates, then schedules, each in the order of the files; then it
// submits the Workflows and TrainJobs of the files, which run with what
// was stored, and says which run each became. A
// runtime identical to the one stored keeps its version; a changed one
// gets the next. Nothing is stored when any object is invalid: the errors
// are coded (KLN-1xxx) and name file, object and field. Runs submitted
// before keep the runtime they resolved.
func (a *App) Apply(ctx context.Context, in apiv1.TemplateApply) (*apiv1.ApplyResult, error) {
	names, docs, readErr := workflow.ReadSources(in.Files)
	project, err := a.projectFor(ctx, in.Project, docs)
	if err != nil {
		return nil, errors.Join(readErr, err)
	}
	quotas, docs, quotaErr := SplitQuotas(docs)
	got, scheds := &workflow.Applying{}, []*apiv1.Schedule(nil)
	if len(docs) > 0 || len(quotas) == 0 && quotaErr == nil { // files of quotas alone hold no template, rightly
		got, scheds, err = a.checkApply(ctx, project, names, docs)
	}
	if err = errors.Join(readErr, quotaErr, err); err != nil {
		return nil, err
	}
	if err := mayApply(in, got); err != nil {
		return nil, err
	}
	if err := a.mayRun(got.Runs); err != nil {
		return nil, err
	}
	now := time.Now()
	res := &apiv1.ApplyResult{Items: []apiv1.Applied{}}
	applied, err := a.applyQuotas(ctx, in, quotas)
	if res.Items = append(res.Items, applied...); err != nil {
		return res, err
	}
	for _, rt := range got.Runtimes {
		stored, changed, err := a.Store.PutRuntime(ctx, store.PutRuntimeParams{Project: project, Runtime: rt, Now: now})
		if err != nil {
			return res, err
		}
		res.Items = append(res.Items, appliedRuntime(stored, changed))
	}
	for _, t := range got.Templates {
		stored, err := a.Store.PutTemplate(ctx, store.PutTemplateParams{Project: project, Template: t, Now: now})
		if err != nil {
			return res, err
		}
		action := apiv1.ApplyCreated
		if !stored.Status.CreatedAt.Equal(stored.Status.UpdatedAt) {
			action = apiv1.ApplyReplaced
		}
		res.Items = append(res.Items, apiv1.Applied{Kind: apiv1.KindWorkflowTemplate, Name: t.Metadata.Name, Project: project, Action: action})
	}
	if res, err = a.applySchedules(ctx, project, scheds, now, res); err != nil {
		return res, err
	}
	return a.applyRuns(ctx, in, project, got.Runs, res)
}

// mayRun checks what submitting the runs of kiln apply checks beyond
// their documents, before anything is stored: on a backend that runs
// images, that each task has an image.
func (a *App) mayRun(runs []workflow.ApplyRun) error {
	if !backend.Has[backend.Images](a.Backend) {
		return nil
	}
	var errs []error
	for _, r := range runs {
		errs = append(errs, workflow.RequireImages(r.Doc, r.Plan))
	}
	return errors.Join(errs...)
}

// applyRuns submits the runs of kiln apply's files, in their order, once
// everything they store is stored, and adds each run's ID to res.
func (a *App) applyRuns(ctx context.Context, in apiv1.TemplateApply, project string, runs []workflow.ApplyRun, res *apiv1.ApplyResult) (*apiv1.ApplyResult, error) {
	for _, r := range runs {
		run, err := a.Submit(ctx, apiv1.Submission{Files: r.Files, Project: project, WorkDir: in.WorkDir})
		if err != nil {
			return res, err
		}
		kind := r.Doc.Kind
		if r.Doc.From != nil {
			kind = r.Doc.From.Kind
		}
		res.Items = append(res.Items, apiv1.Applied{Kind: kind, Name: r.Doc.Name, Project: project, Action: apiv1.ApplySubmitted, Run: run.ID})
	}
	return res, nil
}

// mayApply refuses ClusterTrainingRuntimes from a sender that may not
// write what every project uses.
func mayApply(in apiv1.TemplateApply, got *workflow.Applying) error {
	if in.AllProjects {
		return nil
	}
	for _, rt := range got.Runtimes {
		if rt.Kind == apiv1.KindClusterTrainingRuntime {
			return &apiv1.Error{
				Code: apiv1.CodeForbidden, Object: rt.Kind + "/" + rt.Metadata.Name,
				Message: "a ClusterTrainingRuntime is used by every project: storing one needs a token of every project (*)",
				Hint:    "make it kind: TrainingRuntime to store it in the project, or apply it with a token of every project",
			}
		}
	}
	return nil
}

// appliedRuntime says what storing rt did, in kubectl's words.
func appliedRuntime(rt *apiv1.TrainingRuntime, changed bool) apiv1.Applied {
	action := apiv1.ApplyUnchanged
	switch {
	case changed && rt.Status.CreatedAt.Equal(rt.Status.UpdatedAt):
		action = apiv1.ApplyCreated
	case changed:
		action = apiv1.ApplyConfigured
	}
	return apiv1.Applied{Kind: rt.Kind, Name: rt.Metadata.Name, Project: rt.Status.Project, Version: rt.Status.Version, Action: action}
}

// ListRuntimes lists the runtimes the jobs of project may name: the
// built-in ones and the stored ClusterTrainingRuntimes and project's
// TrainingRuntimes, by name and then in lookup order. Each that a job
// naming it would not get, since one earlier in the order has its name,
// says so: its Status.Source is overridden.
func (a *App) ListRuntimes(ctx context.Context, project string) ([]*apiv1.TrainingRuntime, error) {
	stored, err := a.Store.ListRuntimes(ctx, projectOf(project))
	if err != nil {
		return nil, err
	}
	list := stored
	for _, rt := range training.Builtin() {
		list = append(list, &rt)
	}
	slices.SortStableFunc(list, func(x, y *apiv1.TrainingRuntime) int {
		return cmp.Or(cmp.Compare(x.Metadata.Name, y.Metadata.Name), cmp.Compare(rank(x), rank(y)))
	})
	for i, rt := range list {
		if i > 0 && list[i-1].Metadata.Name == rt.Metadata.Name {
			rt.Status.Source = apiv1.RuntimeSourceOverridden
		}
	}
	return list, nil
}

// rank is rt's place in the lookup order of stored and built-in runtimes.
func rank(rt *apiv1.TrainingRuntime) int {
	switch {
	case rt.Status != nil && rt.Status.Source == apiv1.RuntimeSourceBuiltin:
		return 2
	case rt.Kind == apiv1.KindClusterTrainingRuntime:
		return 1
	}
	return 0
}

// GetRuntime returns one runtime: of q.Kind, or the first of the lookup
// order (the project's, the stored cluster one, the built-in one);
// KLN-4028 when there is none.
func (a *App) GetRuntime(ctx context.Context, q apiv1.RuntimeQuery) (*apiv1.TrainingRuntime, error) {
	if err := checkRuntimeKind(q.Kind); err != nil {
		return nil, err
	}
	q.Project = projectOf(q.Project)
	for _, kind := range []string{apiv1.KindTrainingRuntime, apiv1.KindClusterTrainingRuntime} {
		if q.Kind != "" && q.Kind != kind {
			continue
		}
		rt, err := a.Store.Runtime(ctx, store.RuntimeKey{Kind: kind, Project: q.Project, Name: q.Name, Version: q.Version})
		if !errors.Is(err, store.ErrNotFound) {
			return rt, err
		}
	}
	if rt := builtinRuntime(q.Name); rt != nil && q.Kind != apiv1.KindTrainingRuntime && q.Version == 0 {
		return rt, nil
	}
	return nil, noRuntime(q)
}

// DeleteRuntime removes a stored runtime (q.Kind; empty is
// TrainingRuntime): jobs find it no more, and the runs that used it keep
// what they resolved. KLN-4028 if none is stored, KLN-4029 for a
// built-in one.
func (a *App) DeleteRuntime(ctx context.Context, q apiv1.RuntimeQuery) error {
	if err := checkRuntimeKind(q.Kind); err != nil {
		return err
	}
	q.Project, q.Kind = projectOf(q.Project), cmp.Or(q.Kind, apiv1.KindTrainingRuntime)
	err := a.Store.DeleteRuntime(ctx, store.RuntimeKey{Kind: q.Kind, Project: q.Project, Name: q.Name})
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	e := noRuntime(q)
	if q.Kind == apiv1.KindTrainingRuntime {
		if _, err := a.Store.Runtime(ctx, store.RuntimeKey{Kind: apiv1.KindClusterTrainingRuntime, Name: q.Name}); err == nil {
			e.Hint = "it is a ClusterTrainingRuntime: kiln delete runtime " + q.Name + " --kind ClusterTrainingRuntime"
			return e
		}
	}
	if builtinRuntime(q.Name) != nil {
		return &apiv1.Error{
			Code: apiv1.CodeBuiltinRuntime, Object: apiv1.KindClusterTrainingRuntime + "/" + q.Name,
			Message: fmt.Sprintf("%q is a built-in runtime, and stays", q.Name),
		}
	}
	return e
}

func checkRuntimeKind(kind string) error {
	switch kind {
	case "", apiv1.KindTrainingRuntime, apiv1.KindClusterTrainingRuntime:
		return nil
	}
	return &apiv1.Error{Code: apiv1.CodeRuntimeRef, Field: "kind", Message: fmt.Sprintf("kind %q is neither TrainingRuntime nor ClusterTrainingRuntime", kind)}
}

func noRuntime(q apiv1.RuntimeQuery) *apiv1.Error {
	what := fmt.Sprintf("no runtime %q is stored in project %q or for every project, nor built in", q.Name, q.Project)
	switch q.Kind {
	case apiv1.KindTrainingRuntime:
		what = fmt.Sprintf("project %q stores no TrainingRuntime %q", q.Project, q.Name)
	case apiv1.KindClusterTrainingRuntime:
		what = fmt.Sprintf("no ClusterTrainingRuntime %q is stored", q.Name)
	}
	if q.Version > 0 {
		what += fmt.Sprintf(" in version %d", q.Version)
	}
	return &apiv1.Error{Code: apiv1.CodeNoRuntime, Object: cmp.Or(q.Kind, "runtime") + "/" + q.Name, Message: what}
}

// builtinRuntime is the built-in runtime named name, or nil.
func builtinRuntime(name string) *apiv1.TrainingRuntime {
	for _, rt := range training.Builtin() {
		if rt.Metadata.Name == name {
			return &rt
		}
	}
	return nil
}

// storedRuntimes looks up the runtimes stored in project and for every
// project, for the train tasks whose runtime the files lack.
func (a *App) storedRuntimes(ctx context.Context, project string) workflow.StoredRuntimes {
	return func(kind, name string) (*apiv1.TrainingRuntime, error) {
		rt, err := a.Store.Runtime(ctx, store.RuntimeKey{Kind: kind, Project: project, Name: name})
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return rt, err
	}
}
