package e2e

import (
	"slices"
	"strings"
	"testing"
)

// kiln completion prints cobra's scripts, and the scripts' questions
// (kiln __complete ...) are answered with run IDs, a run's task names
// and stored templates, read from the engine the command would use.
func TestCompletionNamesRunsTasksAndTemplates(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{"bash": "__start_kiln", "zsh": "#compdef kiln", "fish": "complete -c kiln"} {
		if r := kiln(t, newHome(t), "completion", shell); r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("kiln completion %s: exit %d, lacks %q", shell, r.code, want)
		}
	}
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			id := m.runWorkflow(t, "complete-me", "true")
			other := m.runWorkflow(t, "another", "true")
			offered := func(args ...string) []string {
				t.Helper()
				r := m.kiln(t, append([]string{"__complete"}, args...)...)
				var out []string
				for _, l := range strings.Split(r.stdout, "\n") {
					if l != "" && !strings.HasPrefix(l, ":") {
						out = append(out, l)
					}
				}
				return out
			}
			if got := offered("logs", "complete"); !slices.Equal(got, []string{id}) {
				t.Errorf("kiln logs complete<TAB>: %q, want %s", got, id)
			}
			if got := offered("logs", id, ""); !slices.Equal(got, []string{"main"}) {
				t.Errorf("kiln logs %s <TAB>: %q, want its task main", id, got)
			}
			if got := offered("logs", id, "--node", ""); !slices.Equal(got, []string{"main"}) {
				t.Errorf("kiln logs %s --node <TAB>: %q, want its task main", id, got)
			}
			if got := offered("wait", id, ""); !slices.Equal(got, []string{other}) {
				t.Errorf("kiln wait %s <TAB>: %q, want the other run alone", id, got)
			}
			if got := offered("get", "run", ""); !slices.Equal(got, []string{other, id}) {
				t.Errorf("kiln get run <TAB>: %q, want both runs, newest first", got)
			}
			tmpl := writeFile(t, t.TempDir(), "t.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: nightly-etl}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
			if r := m.kiln(t, "apply", "-f", tmpl); r.code != 0 {
				t.Fatalf("apply: %s", r.stderr)
			}
			if got := offered("get", "templates", "night"); !slices.Equal(got, []string{"nightly-etl"}) {
				t.Errorf("kiln get templates night<TAB>: %q", got)
			}
		})
	}
}

// Flag values complete too: --phase (after those given), -o (the
// command's formats), --context (the file's contexts), never file names;
// and the bash script says when the bash-completion package is missing.
func TestCompletionOfFlagValues(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	writeFile(t, home, "config.yaml", "contexts:\n- name: prod\n- name: laptop\n")
	offered := func(args ...string) ([]string, string) {
		t.Helper()
		r := kilnWithEnv(t, withoutServer(), home, append([]string{"__complete"}, args...)...)
		var out []string
		directive := ""
		for _, l := range strings.Split(r.stdout, "\n") {
			switch {
			case strings.HasPrefix(l, ":"):
				directive = l
			case l != "":
				out = append(out, l)
			}
		}
		return out, directive
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", "runs", "--phase", "fa"}, []string{"failing", "failed"}},
		{[]string{"get", "runs", "--phase", "failed,c"}, []string{"failed,cancelling", "failed,cancelled"}},
		{[]string{"get", "runs", "-o", ""}, []string{"table", "wide", "json", "yaml", "name", "jsonpath="}},
		{[]string{"describe", "run", "-o", ""}, []string{"json", "yaml", "jsonpath="}},
		{[]string{"config", "get-contexts", "-o", ""}, []string{"table", "json", "yaml", "name"}},
		{[]string{"get", "runs", "--context", ""}, []string{"prod", "laptop"}},
	} {
		got, directive := offered(c.args...)
		if !slices.Equal(got, c.want) || directive != ":4" { // 4: no file names
			t.Errorf("kiln %v<TAB>: %q %s; want %q and no file names", c.args, got, directive, c.want)
		}
	}
	r := kiln(t, home, "completion", "bash")
	if !strings.HasPrefix(r.stdout, "# kiln's completion needs the bash-completion package.") {
		t.Errorf("kiln completion bash does not start by checking for bash-completion:\n%.300s", r.stdout)
	}
	if r := kiln(t, home, "completion", "bash", "--help"); !strings.Contains(r.stdout, "bash-completion") {
		t.Errorf("kiln completion bash --help does not name bash-completion:\n%s", r.stdout)
	}
}
