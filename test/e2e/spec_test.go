package e2e

import (
	"strings"
	"testing"
)

// kiln validate and kiln run judge files alike: what one refuses, so does
// the other, with the same coded error.
func TestValidateAgreesWithRun(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	dir := t.TempDir()
	wf := func(name string) string {
		return "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: " + name + "}\nspec: {tasks: [{name: a, command: [\"true\"]}]}\n"
	}
	cases := map[string]struct {
		text, want string
	}{
		"an empty file":                         {"# nothing yet\n", "KLN-1013"},
		"two workflows in one file":             {wf("one") + "---\n" + wf("two"), "KLN-1013"},
		"a YAML boolean where a string belongs": {strings.Replace(wf("one"), "name: a", "name: n", 1), "KLN-1021"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := writeFile(t, dir, strings.ReplaceAll(name, " ", "-")+".yaml", tc.text)
			for _, cmd := range []string{"validate", "run"} {
				r := kiln(t, home, cmd, file)
				if r.code != 1 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, file) {
					t.Errorf("kiln %s %s: exit %d, %q; want 1 and %s naming the file", cmd, name, r.code, r.stderr, tc.want)
				}
			}
		})
	}
	if got := runs(t, home); len(got) != 0 {
		t.Errorf("refused files left %d runs behind", len(got))
	}
}

func TestRunWithoutAFileIsAUsageError(t *testing.T) {
	t.Parallel()
	r := kiln(t, newHome(t), "run")
	if r.code != 2 || !strings.Contains(r.stderr, "KLN-4002") || !strings.Contains(r.stderr, "kiln run FILE") {
		t.Errorf("kiln run with no file: exit %d, %q; want 2 and KLN-4002 saying what it takes", r.code, r.stderr)
	}
}
