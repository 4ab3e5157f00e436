package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// completion is cobra's: kiln completion bash|zsh|fish|powershell prints
// the script, and the script asks kiln __complete for arguments. The
// functions here answer for the arguments that name things kiln keeps:
// run IDs, a run's task names, templates and schedules, read from the
// engine the command would talk to (--home, --server, --context apply).

// completeRuns completes a command's first argument with run IDs, newest
// first; later arguments get none.
func completeRuns(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return runIDs(cmd.Context(), e, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRunTask completes RUN, then TASK with the run's task names.
func completeRunTask(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return runIDs(cmd.Context(), e, toComplete), cobra.ShellCompDirectiveNoFileComp
		case 1:
			return taskNames(cmd.Context(), e, apiv1.RunID(args[0]), toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNodeFlag completes --node with the task names of the run that
// is the command's first argument.
func completeNodeFlag(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return taskNames(cmd.Context(), e, apiv1.RunID(args[0]), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNamed completes the first argument with the names list returns
// for the command's --project flag.
func completeNamed(e *env, list func(ctx context.Context, eng engine, project string) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		project, _ := cmd.Flags().GetString("project")
		var out []cobra.Completion
		_ = withEngine(cmd.Context(), e, func(eng engine) error {
			names, err := list(cmd.Context(), eng, project)
			out = withPrefix(names, toComplete)
			return err
		})
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// templateNames and scheduleNames list a project's stored templates and
// schedules, for completion.
func templateNames(ctx context.Context, eng engine, project string) ([]string, error) {
	items, err := eng.ListTemplates(ctx, project)
	var names []string
	for _, t := range items {
		names = append(names, t.Metadata.Name)
	}
	return names, err
}

func scheduleNames(ctx context.Context, eng engine, project string) ([]string, error) {
	items, err := eng.ListSchedules(ctx, project)
	var names []string
	for _, s := range items {
		names = append(names, s.Metadata.Name)
	}
	return names, err
}

// runIDs are the IDs of up to 200 of the newest runs that start with prefix.
func runIDs(ctx context.Context, e *env, prefix string) []string {
	var ids []string
	_ = withEngine(ctx, e, func(eng engine) error {
		page, err := eng.ListRuns(ctx, apiv1.RunQuery{Limit: 200})
		if err != nil {
			return err
		}
		for _, r := range page.Items {
			ids = append(ids, string(r.ID))
		}
		return nil
	})
	return withPrefix(ids, prefix)
}

// taskNames are the names of run id's tasks that start with prefix.
func taskNames(ctx context.Context, e *env, id apiv1.RunID, prefix string) []string {
	var names []string
	_ = withEngine(ctx, e, func(eng engine) error {
		run, err := eng.GetRun(ctx, id)
		if err != nil {
			return err
		}
		for _, n := range run.Status.Nodes {
			names = append(names, n.Name)
		}
		return nil
	})
	return withPrefix(names, prefix)
}

// withEngine opens the engine for reading, calls fn and lets it go. A
// completion that cannot read offers nothing rather than an error.
func withEngine(ctx context.Context, e *env, fn func(engine) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := e.resolveContext(); err != nil {
		return err
	}
	eng, done, err := e.open(ctx, reading, nil)
	if err != nil {
		return err
	}
	defer done()
	return fn(eng)
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// completeAnyRun completes every argument with run IDs not given yet.
func completeAnyRun(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, id := range runIDs(cmd.Context(), e, toComplete) {
			if !slices.Contains(args, id) {
				out = append(out, id)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// wireCompletion gives the commands that name runs, tasks, templates and
// schedules their completion, by command path; a command that has its
// own keeps it.
func wireCompletion(root *cobra.Command, e *env) {
	templates, schedules := completeNamed(e, templateNames), completeNamed(e, scheduleNames)
	funcs := map[string]cobra.CompletionFunc{
		"describe run": completeRuns(e), "cancel": completeRuns(e), "retry": completeRuns(e), "rerun": completeRuns(e),
		"suspend": completeRuns(e), "unsuspend": completeRuns(e), "get trainjob": completeRuns(e),
		"wait": completeAnyRun(e), "watch": completeAnyRun(e), "delete run": completeAnyRun(e),
		"approve": completeRunTask(e), "reject": completeRunTask(e), "signal": completeRunTask(e),
		"get templates": templates, "delete template": templates,
		"get schedules": schedules, "delete schedule": schedules, "suspend schedule": schedules, "unsuspend schedule": schedules,
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if fn, ok := funcs[path]; ok && c.ValidArgsFunction == nil {
			c.ValidArgsFunction = fn
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
