package cli

import (
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Argument checks that answer a wrong count with a coded usage error
// saying what the command takes.

func one(says string) cobra.PositionalArgs { return between(1, 1, says) }

func none(says string) cobra.PositionalArgs { return between(0, 0, says) }

func needFiles(says string) cobra.PositionalArgs { return between(1, -1, says) }

// between accepts from min to max arguments; max < 0 has no upper bound.
func between(min, max int, says string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) < min || (max >= 0 && len(args) > max) {
			return usagef("%s (got %d arguments)", says, len(args))
		}
		return nil
	}
}

// usagef is a coded usage error: a bad flag or argument.
func usagef(format string, args ...any) error { return usage(format, args...) }

// usage is usagef as the *apiv1.Error it is, for a caller that adds to it.
func usage(format string, args ...any) *apiv1.Error {
	return apiv1.Errorf(apiv1.CodeUsage, sprintf(format, args...))
}

// group returns a command that only holds subcommands. Run alone it shows
// its help; run with anything else it is a usage error naming the
// subcommands it has, not a silent help page and exit 0.
func group(use, short string) *cobra.Command {
	return &cobra.Command{
		Use: use + " COMMAND", Short: short,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			var subs []string
			for _, c := range cmd.Commands() {
				if c.IsAvailableCommand() {
					subs = append(subs, c.Name())
				}
			}
			e := usage("kiln %s has no subcommand %q; it has: %s", use, args[0], strings.Join(subs, ", "))
			return withSuggestion(e, nearCommands(cmd, args[0]), func(s string) string { return s })
		},
	}
}
