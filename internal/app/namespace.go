package app

import (
	"context"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/workflow"
)

// projectFor is the project that docs, the files of a run or of kiln
// apply, go to: given (empty: none given) or their metadata.namespace,
// when this kiln has a project of that name (workflow.ProjectOf).
func (a *App) projectFor(ctx context.Context, given string, docs []workflow.Document) (string, error) {
	return workflow.ProjectOf(docs, given, func(name string) (bool, error) { return a.projectExists(ctx, name) })
}

// projectExists reports whether kiln knows project: a run, a stored
// template, runtime or schedule, a quota or an API token names it. kiln
// keeps no list of projects: a project is what names it.
func (a *App) projectExists(ctx context.Context, project string) (bool, error) {
	runs, err := a.Store.ListRuns(ctx, store.ListRunsParams{Projects: []string{project}, Limit: 1})
	if err != nil || len(runs) > 0 {
		return len(runs) > 0, err
	}
	tmpls, err := a.Store.ListTemplates(ctx, project)
	if err != nil || len(tmpls) > 0 {
		return len(tmpls) > 0, err
	}
	rts, err := a.Store.ListRuntimes(ctx, project)
	if err != nil {
		return false, err
	}
	if slices.ContainsFunc(rts, func(rt *apiv1.TrainingRuntime) bool { return rt.Kind == apiv1.KindTrainingRuntime }) {
		return true, nil
	}
	scheds, err := a.Store.ListSchedules(ctx, project)
	if err != nil || len(scheds) > 0 {
		return len(scheds) > 0, err
	}
	return a.namedByQuotaOrToken(ctx, project)
}

func (a *App) namedByQuotaOrToken(ctx context.Context, project string) (bool, error) {
	quotas, err := a.Store.ListQuotas(ctx)
	if err != nil {
		return false, err
	}
	if slices.ContainsFunc(quotas, func(q apiv1.ProjectQuota) bool { return q.Metadata.Name == project }) {
		return true, nil
	}
	tokens, err := a.Store.ListTokens(ctx)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(tokens, func(t store.Token) bool { return !t.Revoked && slices.Contains(t.Projects, project) }), nil
}
