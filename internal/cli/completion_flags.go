package cli

import (
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// wireFlagCompletion completes the values of flags that have a fixed set,
// or one kiln knows: -o of every command (its formats), --phase (the run
// phases, after those already given, comma separated) and --context (the
// configuration file's contexts).
func wireFlagCompletion(root *cobra.Command, e *env) {
	_ = root.RegisterFlagCompletionFunc("context", completeContexts(e))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.LocalFlags().Lookup("output") != nil {
			_ = c.RegisterFlagCompletionFunc("output", completeOutput)
		}
		if c.LocalFlags().Lookup("phase") != nil {
			_ = c.RegisterFlagCompletionFunc("phase", completePhases)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completePhases completes the last of comma-separated phases, in lower
// case as people type them, leaving out those given before it.
func completePhases(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	given, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		given, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, p := range apiv1.RunPhases() {
		name := strings.ToLower(string(p))
		if strings.HasPrefix(name, strings.ToLower(last)) && !strings.Contains(","+strings.ToLower(given), ","+name+",") {
			out = append(out, given+name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeContexts completes --context with the configuration file's
// context names.
func completeContexts(e *env) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, _, err := e.backend.load(e.home)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, c := range cfg.Contexts {
			names = append(names, c.Name)
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}
