package cli

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/suggest"
)

var (
	unknownFlag    = regexp.MustCompile(`^unknown flag: --([^ =]+)`)
	unknownCommand = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)
	invalidValue   = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-[^ ], )?--([^"]+)" flag: `)
)

// flagError is the usage error of a flag cmd does not take, with the
// flags it does take that are near the one typed (did you mean --limit?),
// or of a flag's value that is not of the flag's type (see badValue).
func flagError(cmd *cobra.Command, err error) error {
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return badValue(cmd, err)
	}
	var names []string
	visit := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return withSuggestion(usage("%v", err), suggest.Closest(m[1], names), func(s string) string { return "--" + s })
}

// badValue is the usage error of a flag's value that does not parse as
// the flag's type: it names the flag, says what the flag takes in words
// (not strconv's), and hints with the flag's own help.
func badValue(cmd *cobra.Command, err error) error {
	m := invalidValue.FindStringSubmatch(err.Error())
	if m == nil {
		return usagef("%v", err)
	}
	f := cmd.Flags().Lookup(m[2])
	if f == nil {
		return usagef("%v", err)
	}
	what, ok := typeWords[f.Value.Type()]
	if !ok {
		return usagef("%v", err)
	}
	return &apiv1.Error{Code: apiv1.CodeUsage, Field: "--" + f.Name, Message: fmt.Sprintf("%q is not %s", m[1], what), Hint: f.Usage}
}

// typeWords says what a flag of each type takes.
var typeWords = map[string]string{
	"int": "a whole number", "int32": "a whole number", "int64": "a whole number",
	"uint": "a whole number, 0 or more", "uint32": "a whole number, 0 or more", "uint64": "a whole number, 0 or more",
	"float32": "a number", "float64": "a number", "bool": "true or false",
	"duration": "a duration such as 90s, 10m or 2h",
}

// commandError is the usage error of a command kiln does not have, with
// the commands near the one typed (did you mean run?); cobra's own
// suggestions are off.
func commandError(root *cobra.Command, err error) error {
	m := unknownCommand.FindStringSubmatch(err.Error())
	if m == nil {
		return usagef("%v", err)
	}
	msg := usage("unknown command %q for %q", m[1], m[2])
	return withSuggestion(msg, nearCommands(root, m[1]), func(s string) string { return s })
}

// nearCommands are the commands of cmd whose name or alias is near word,
// each by its name once.
func nearCommands(cmd *cobra.Command, word string) []string {
	var out []string
	for _, n := range suggest.Closest(word, commandNames(cmd)) {
		for _, c := range cmd.Commands() {
			if (c.Name() == n || slices.Contains(c.Aliases, n)) && !slices.Contains(out, c.Name()) {
				out = append(out, c.Name())
			}
		}
	}
	return out
}

// commandNames are the names and aliases of cmd's commands that users see.
func commandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	return names
}

// withSuggestion adds "; did you mean x?" to e's message, if near holds any.
func withSuggestion(e *apiv1.Error, near []string, quote func(string) string) *apiv1.Error {
	if s := suggest.Phrase(near, quote); s != "" {
		e.Message = strings.TrimSuffix(e.Message, ".") + "; " + s
	}
	return e
}
