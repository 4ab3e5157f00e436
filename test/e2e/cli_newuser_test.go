package e2e

import (
	"strings"
	"testing"
)

// What a new user's walk through kiln typed wrong reads as every other
// mistake does: a coded error on one line, with a hint or a suggestion,
// exiting 2 for the command line.
func TestNewUsersMistakesAreCodedWithHints(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"token", "create"}, 2, []string{"KLN-4002", "kiln token create takes the token's name", "(got 0 arguments)"}},
		{[]string{"token", "revoke"}, 2, []string{"KLN-4002", "kiln token revoke takes the token's ID"}},
		{[]string{"token", "revoke", "a", "b"}, 2, []string{"KLN-4002", "(got 2 arguments)"}},
		{[]string{"token", "list", "x"}, 2, []string{"KLN-4002", "kiln token list takes no arguments"}},
		{[]string{"token", "revoke", "nope"}, 1, []string{"KLN-4077 Token/nope: no such token", "kiln token list"}},
		{[]string{"token", "create", "ci", "--role", "viewr"}, 2, []string{"KLN-4002 --role", `did you mean "viewer"?`}},
		{[]string{"describe", "run", "x", "--events", "-5"}, 2, []string{"KLN-4002 --events: -5 is not a number of events", "-1 for all"}},
		{[]string{"describe", "run", "x", "--events", "abc"}, 2, []string{`KLN-4002 --events: "abc" is not a whole number`, "-1 shows all"}},
	} {
		r := kiln(t, home, c.args...)
		for _, w := range c.want {
			if r.code != c.code || !strings.Contains(r.stderr, w) || strings.Contains(r.stderr, "accepts 1 arg") || strings.Contains(r.stderr, "strconv") {
				t.Errorf("kiln %v: exit %d, %q; want %d and %q", c.args, r.code, r.stderr, c.code, w)
				break
			}
		}
	}
	// the kubeconfig hint names the flag kiln has: --kube-context, which
	// the same command line takes
	wf := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: k}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	r := kiln(t, home, "run", "--backend", "kubernetes", "--kubeconfig", "/nonexistent", "--kube-context", "x", wf)
	if r.code != 1 || !strings.Contains(r.stderr, "KLN-6008") || !strings.Contains(r.stderr, "pass --kubeconfig and --kube-context,") {
		t.Errorf("a kubeconfig that is not there: %d %q", r.code, r.stderr)
	}
	r = kiln(t, home, "secret", "list", "-o", "jsonpath={.items[*].name}")
	if r.code != 0 {
		t.Errorf("secret list -o jsonpath: %d %s", r.code, r.stderr)
	}
}

// A mistyped key of KILN_HOME/config.yaml is KLN-1002 at its line and
// column, with its path and the nearest fields, as a spec file's reads.
func TestAConfigFileTypoIsAnUnknownFieldWithItsPlace(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"sever: http://x\n":                          "KLN-1002 HOME/config.yaml:1:1: sever: unknown field, did you mean contexts[].server?",
		"contexts:\n- name: a\n  sevrer: http://x\n": `KLN-1002 HOME/config.yaml:3:3: contexts[0].sevrer: unknown field, did you mean "server"?`,
		"kubernetes: {namespce: x}\n":                `KLN-1002 HOME/config.yaml:1:14: kubernetes.namespce: unknown field, did you mean "namespace"?`,
	} {
		home := newHome(t)
		writeFile(t, home, "config.yaml", text)
		r := kiln(t, home, "get", "runs")
		if w := strings.ReplaceAll(want, "HOME", home); r.code != 1 || !strings.Contains(r.stderr, w) || strings.Contains(r.stderr, "JSON") {
			t.Errorf("config.yaml %q: exit %d, %q; want %q", text, r.code, r.stderr, w)
		}
	}
}

// A mistyped kind is KLN-1003 naming every kind the command reads, with
// the nearest one.
func TestAMistypedKindSuggestsAndListsTheKinds(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	f := writeFile(t, t.TempDir(), "kind.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Wrokflow\nmetadata: {name: a}\n")
	for _, cmd := range []string{"run", "validate"} {
		r := kiln(t, home, cmd, f)
		for _, w := range []string{"KLN-1003", `kind "Wrokflow" is not one kiln reads`, `did you mean "Workflow"?`, "TrainJob", "WorkflowTemplate", "Schedule", "ProjectQuota", "ClusterTrainingRuntime"} {
			if r.code != 1 || !strings.Contains(r.stderr, w) {
				t.Errorf("kiln %s: exit %d %q; want %q", cmd, r.code, r.stderr, w)
				break
			}
		}
	}
	sched := writeFile(t, t.TempDir(), "s.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Shedule\nmetadata: {name: a}\n")
	if r := kiln(t, home, "apply", "-f", sched); r.code != 1 || !strings.Contains(r.stderr, `did you mean "Schedule"?`) || !strings.Contains(r.stderr, "TrainingRuntime") {
		t.Errorf("kiln apply: %d %q", r.code, r.stderr)
	}
}

// kiln logs of a group names its real children, and of an attempt the
// task does not have says where attempts are listed.
func TestLogsHintsNameChildrenAndAttempts(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	wf := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: exits}\nspec:\n"+
		"  tasks:\n  - {name: list, command: ['true']}\n  onExit:\n  - {name: notify, command: ['true']}\n")
	if r := kiln(t, home, "run", "-q", wf); r.code != 0 {
		t.Fatalf("run: %s", r.stderr)
	}
	id := strings.TrimSpace(kiln(t, home, "get", "runs", "-o", "name").stdout)
	r := kiln(t, home, "logs", id, "onExit")
	if r.code == 0 || !strings.Contains(r.stderr, "kiln logs "+id+" onExit.notify for one of its children: onExit.notify") || strings.Contains(r.stderr, "onExit.0") {
		t.Errorf("logs of onExit: %d %q", r.code, r.stderr)
	}
	r = kiln(t, home, "logs", id, "list", "--attempt", "5")
	if r.code == 0 || !strings.Contains(r.stderr, "task list has no attempt 5 (it has 1)") || !strings.Contains(r.stderr, "kiln describe run "+id+" lists each task's attempts") {
		t.Errorf("logs --attempt 5: %d %q", r.code, r.stderr)
	}
}
