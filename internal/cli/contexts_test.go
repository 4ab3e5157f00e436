package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestAContextNamedOnTheCommandLineBeatsTheEnvironment(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		explicit         bool
		fromContext, env string
		want             string
	}{
		"--context wins":                  {true, "ctx", "env", "ctx"},
		"the environment beats current":   {false, "ctx", "env", "env"},
		"current when nothing else":       {false, "ctx", "", "ctx"},
		"--context without a value of it": {true, "", "env", "env"},
	} {
		if got := pick(tc.explicit, tc.fromContext, tc.env); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

func TestUseContextKeepsTheRestOfTheFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	before := "# where kiln runs\nstore: sqlite\ncontexts:\n- {name: a, server: http://a}\ncurrent-context: b\n"
	if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := setCurrentContext(path, "a"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	for _, want := range []string{"# where kiln runs", "store: sqlite", "name: a", "current-context: a"} {
		if !strings.Contains(string(after), want) {
			t.Errorf("after use-context a, the file lacks %q:\n%s", want, after)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode became %v; it holds tokens", fi.Mode().Perm())
	}
}

func TestUseContextChangesOneLineOnly(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ before, name, want string }{
		"lists at the left edge": {
			"contexts:\n- name: a\n  server: http://a\n- name: b\ncurrent-context: a   # the usual\nstore: sqlite\n", "b",
			"contexts:\n- name: a\n  server: http://a\n- name: b\ncurrent-context: b   # the usual\nstore: sqlite\n",
		},
		"lists indented, no current yet": {
			"contexts:\n    -   name: a\n        token: t\n", "a",
			"contexts:\n    -   name: a\n        token: t\ncurrent-context: a\n",
		},
		"no newline at the end":              {"contexts:\n- name: x y\n", "x y", "contexts:\n- name: x y\ncurrent-context: x y\n"},
		"a name yaml would read as a number": {"contexts:\n- name: '01'\ncurrent-context: b\n", "01", "contexts:\n- name: '01'\ncurrent-context: \"01\"\n"},
	} {
		got, ok := editCurrentContext([]byte(tc.before), tc.name)
		if !ok || string(got) != tc.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", name, ok, got, tc.want)
		}
	}
	if _, ok := editCurrentContext([]byte("{contexts: [{name: a}], current-context: b}\n"), "a"); ok {
		t.Error("a flow mapping was edited line-wise")
	}
}

func TestLogFlagsBecomeAQuery(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 16, 0, 0, 0, time.UTC)
	f := logFlags{node: "train", tail: 5, since: "10m", timestamps: true}
	q, err := f.query([]string{"run-1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if q.Task != "train" || q.Tail != 5 || !q.Timestamps || q.Since == nil || !q.Since.Equal(now.Add(-10*time.Minute)) {
		t.Errorf("query %+v", q)
	}
	for name, tc := range map[string]struct {
		f    logFlags
		args []string
	}{
		"two different tasks": {logFlags{node: "a"}, []string{"run-1", "b"}},
		"a negative tail":     {logFlags{tail: -1}, []string{"run-1"}},
		"a since that is not": {logFlags{since: "lately"}, []string{"run-1"}},
	} {
		if _, err := tc.f.query(tc.args, now); !usageCodes[apiv1.CodeOf(err)] {
			t.Errorf("%s: %v, want a usage error (exit 2)", name, err)
		}
	}
	if q, err := (&logFlags{node: "a"}).query([]string{"run-1", "a"}, now); err != nil || q.Task != "a" {
		t.Errorf("the same task twice: %+v, %v", q, err)
	}
}
