package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Every command with -o has its list of formats, and every list names a
// command with -o: the check and the completion cover them all.
func TestEveryOutputFlagHasItsFormats(t *testing.T) {
	t.Parallel()
	root := newRoot(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
	seen := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("output") != nil {
			seen[c.CommandPath()] = true
			if len(outputFormats[c.CommandPath()]) == 0 {
				t.Errorf("%s has -o but no entry in outputFormats", c.CommandPath())
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for path := range outputFormats {
		if !seen[path] {
			t.Errorf("outputFormats names %q, which has no -o", path)
		}
	}
}

func TestAnOutputFormatErrorListsWhatTheCommandTakes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		ok   bool
		hint string
	}{
		{[]string{"get", "runs", "-o", "xml"}, false, "use table, wide, json, yaml, name or jsonpath=TEMPLATE"},
		{[]string{"get", "runs", "-o", "jsonpath={.items[*].id}"}, true, ""},
		{[]string{"describe", "run", "x", "-o", "wide"}, false, "use json, yaml or jsonpath=TEMPLATE"},
		{[]string{"config", "get-contexts", "-o", "json"}, true, ""},
		{[]string{"config", "get-contexts", "-o", "wide"}, false, "use table, json, yaml or name"},
		{[]string{"convert", "-o", "name"}, false, "use yaml or json"},
	} {
		root := newRoot(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard})
		cmd, rest, err := root.Find(c.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatal(err)
		}
		err = checkOutput(cmd)
		if c.ok != (err == nil) {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if err == nil {
			continue
		}
		e := apiv1.Errors(err)[0]
		if e.Code != apiv1.CodeOutputFormat || e.Hint != c.hint {
			t.Errorf("%v: %v; want KLN-4053 with hint %q", c.args, err, c.hint)
		}
	}
}
