package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// wireFlagCompletion completes the values of flags that have a fixed set,
// or one kiln knows: -o of every command (its formats), --phase (the run
// phases, after those already given, comma separated) and --context (the
// configuration file's contexts).
func wireFlagCompletion(root *cobra.Command, e *env) {
	guardBashCompletion(root)
	_ = root.RegisterFlagCompletionFunc("context", completeContexts(e))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// c.Flags() before parsing holds the command's own flags alone;
		// LocalFlags would merge every parent's persistent flags into
		// every command first, a tenth of a kiln process's start.
		if ownFlag(c, "output") {
			_ = c.RegisterFlagCompletionFunc("output", completeOutput)
		}
		if ownFlag(c, "phase") {
			_ = c.RegisterFlagCompletionFunc("phase", completePhases)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// ownFlag reports whether c itself, not a parent, defines the flag name.
func ownFlag(c *cobra.Command, name string) bool {
	return c.Flags().Lookup(name) != nil || c.PersistentFlags().Lookup(name) != nil
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

// bashCompletionGuard starts kiln completion bash's script: without the
// bash-completion package the script fails at each TAB with
// "_get_comp_words_by_ref: command not found", so it says so once, when
// sourced, and how to get the package.
const bashCompletionGuard = `# kiln's completion needs the bash-completion package.
if ! declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
    echo "kiln completion: install the bash-completion package (apt install bash-completion, dnf install bash-completion, brew install bash-completion@2) and start a new shell" >&2
fi
`

// guardBashCompletion makes kiln completion bash print bashCompletionGuard
// before cobra's script, and its help say why.
func guardBashCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		for _, sh := range c.Commands() {
			if sh.Name() != "bash" || sh.RunE == nil {
				continue
			}
			script := sh.RunE
			sh.RunE = func(cmd *cobra.Command, args []string) error {
				if _, err := io.WriteString(cmd.OutOrStdout(), bashCompletionGuard); err != nil {
					return err
				}
				return script(cmd, args)
			}
			sh.Long += "\nWithout bash-completion the script says so when sourced, and TAB fails with\n" +
				"\"_get_comp_words_by_ref: command not found\".\n"
		}
	}
}
