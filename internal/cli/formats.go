package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// The -o formats, as a command's list names them.
const (
	fmtTable    = "table"
	fmtWide     = "wide"
	fmtJSON     = "json"
	fmtYAML     = "yaml"
	fmtName     = "name"
	fmtJSONPath = "jsonpath=TEMPLATE"
)

// data are the formats of every command that prints an object: its
// document as JSON or YAML, or a jsonpath template over it.
var data = []string{fmtJSON, fmtYAML, fmtJSONPath}

// outputFormats are the -o formats each command takes, by its path; the
// first is what it prints without -o when that is a table. kiln checks
// -o against this list before the command runs, and completes -o from it;
// docs/cli.md lists the same.
var outputFormats = map[string][]string{
	"kiln get runs":            {fmtTable, fmtWide, fmtJSON, fmtYAML, fmtName, fmtJSONPath},
	"kiln get trainjob":        append([]string{fmtTable}, data...),
	"kiln get runtimes":        append([]string{fmtTable}, data...),
	"kiln get templates":       append([]string{fmtTable}, data...),
	"kiln get schedules":       append([]string{fmtTable}, data...),
	"kiln get quotas":          append([]string{fmtTable}, data...),
	"kiln cache ls":            append([]string{fmtTable}, data...),
	"kiln artifacts ls":        append([]string{fmtTable}, data...),
	"kiln party list":          append([]string{fmtTable}, data...),
	"kiln token list":          append([]string{fmtTable}, data...),
	"kiln secret list":         append([]string{fmtTable}, data...),
	"kiln messages":            append([]string{fmtTable}, data...),
	"kiln whoami":              append([]string{fmtTable}, data...),
	"kiln config get-contexts": {fmtTable, fmtJSON, fmtYAML, fmtName},
	"kiln describe run":        data,
	"kiln submit":              data,
	"kiln version":             data,
	"kiln gc":                  data,
	"kiln convert":             {fmtYAML, fmtJSON},
}

// formatsOf are the -o formats cmd takes, or nil when it has no -o.
func formatsOf(cmd *cobra.Command) []string {
	if cmd.Flags().Lookup("output") == nil {
		return nil
	}
	return outputFormats[cmd.CommandPath()]
}

// checkOutput refuses an -o value cmd does not print, naming the formats
// it does (KLN-4053, exit 2), before the command does anything.
func checkOutput(cmd *cobra.Command) error {
	f := cmd.Flags().Lookup("output")
	if f == nil || !f.Changed {
		return nil
	}
	formats := formatsOf(cmd)
	if takesFormat(formats, f.Value.String()) {
		return nil
	}
	return &apiv1.Error{
		Code: apiv1.CodeOutputFormat, Field: "--output",
		Message: fmt.Sprintf("%s does not print %q", cmd.CommandPath(), f.Value.String()),
		Hint:    "use " + orList(formats),
	}
}

// takesFormat reports whether v is one of formats; a jsonpath=... is
// the jsonpath format, whose template is checked when it prints.
func takesFormat(formats []string, v string) bool {
	for _, f := range formats {
		if v == f || (f == fmtJSONPath && strings.HasPrefix(v, "jsonpath=")) {
			return true
		}
	}
	return false
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// completeOutput completes -o with the formats cmd takes.
func completeOutput(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, f := range formatsOf(cmd) {
		if f == fmtJSONPath {
			f = "jsonpath="
		}
		out = append(out, f)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
