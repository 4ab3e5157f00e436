package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// cliMode is one way the CLI reaches kiln: the engine embedded in each
// command, on home, or a server, through env.
type cliMode struct {
	name string
	home string
	env  []string // nil: this process's environment
}

// cliModes starts a server for the test and returns both modes.
func cliModes(t *testing.T) []cliMode {
	t.Helper()
	base, admin, _ := startServeAs(t, newHome(t), nil, nil, "--isolation", "none") // tasks run from the tests' temporary directories
	return []cliMode{
		{name: "embedded", home: newHome(t)},
		{name: "server", home: newHome(t), env: append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)},
	}
}

func (m cliMode) kiln(t *testing.T, args ...string) result {
	t.Helper()
	return kilnWithEnv(t, m.env, m.home, args...)
}

// runWorkflow runs a one-task workflow named name whose task runs sh and
// returns the run's ID.
func (m cliMode) runWorkflow(t *testing.T, name, sh string) string {
	t.Helper()
	file := writeFile(t, t.TempDir(), name+".yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: "+name+
		"}\nspec:\n  tasks:\n  - name: main\n    command: [/bin/sh, -c, '"+sh+"']\n")
	m.kiln(t, "run", "-q", file)
	r := m.kiln(t, "get", "runs", "--search", name, "--limit", "1", "-o", "name")
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || id == "" {
		t.Fatalf("%s: no run of %s: %q %q", m.name, name, r.stdout, r.stderr)
	}
	return id
}

// kiln get runs filters as kubectl and argo users type, shows one run by
// ID, prints wide tables and jsonpath, embedded and through a server.
func TestGetRunsFiltersAndFormats(t *testing.T) {
	t.Parallel()
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			alpha := m.runWorkflow(t, "alpha-nightly", "echo alpha")
			beta := m.runWorkflow(t, "beta", "exit 3")
			gamma := m.runWorkflow(t, "gamma", "true")
			names := func(args ...string) []string {
				t.Helper()
				r := m.kiln(t, append([]string{"get", "runs", "-o", "name"}, args...)...)
				if r.code != 0 {
					t.Fatalf("get runs %v: exit %d, %s", args, r.code, r.stderr)
				}
				return strings.Fields(r.stdout)
			}
			for what, tc := range map[string]struct {
				args []string
				want []string
			}{
				"every run, newest first": {nil, []string{gamma, beta, alpha}},
				"oldest first":            {[]string{"--ascending"}, []string{alpha, beta, gamma}},
				"phases in any case":      {[]string{"--phase", "FAILED,cancelled"}, []string{beta}},
				"a search in any case":    {[]string{"--search", "NIGHT"}, []string{alpha}},
				"created since an hour":   {[]string{"--since", "1h"}, []string{gamma, beta, alpha}},
				"created before an hour":  {[]string{"--until", "1h"}, nil},
				"created since a time":    {[]string{"--since", "2000-01-01T00:00:00Z", "--phase", "succeeded"}, []string{gamma, alpha}},
				"the page after a limit":  {[]string{"--limit", "1", "--ascending"}, []string{alpha}},
			} {
				if got := names(tc.args...); !slices.Equal(got, tc.want) {
					t.Errorf("%s (get runs %v): %v, want %v", what, tc.args, got, tc.want)
				}
			}
			one := m.kiln(t, "get", "run", beta)
			if lines := strings.Split(strings.TrimSpace(one.stdout), "\n"); one.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], beta+" ") || !strings.Contains(lines[1], "Failed") {
				t.Errorf("get run %s: exit %d, %q; want the table's header and its row", beta, one.code, one.stdout)
			}
			if r := m.kiln(t, "get", "run", beta, "-o", "jsonpath={.status.phase}"); strings.TrimSpace(r.stdout) != "Failed" {
				t.Errorf("get run -o jsonpath={.status.phase}: %q %q", r.stdout, r.stderr)
			}
			if r := m.kiln(t, "get", "runs", "-o", "jsonpath={.items[*].id}"); strings.TrimSpace(r.stdout) != gamma+" "+beta+" "+alpha {
				t.Errorf("get runs -o jsonpath={.items[*].id}: %q %q", r.stdout, r.stderr)
			}
			wide := m.kiln(t, "get", "runs", "-o", "wide")
			for _, want := range []string{"PROJECT", "TASKS", "LABELS", "1 failed", "1 succeeded", "default"} {
				if !strings.Contains(wide.stdout, want) {
					t.Errorf("get runs -o wide lacks %q:\n%s", want, wide.stdout)
				}
			}
			if r := m.kiln(t, "get", "runs", "--phase", "running,nope"); r.code != 2 || !strings.Contains(r.stderr, "KLN-4050 --phase") || !strings.Contains(r.stderr, `"nope"`) || !strings.Contains(r.stderr, "Cancelling") {
				t.Errorf("get runs --phase running,nope: exit %d, %q; want 2, naming nope and the phases", r.code, r.stderr)
			}
			if r := m.kiln(t, "get", "runs", "-o", "jsonpath={.items["); r.code != 2 || !strings.Contains(r.stderr, "KLN-4053") {
				t.Errorf("a jsonpath that does not parse: exit %d, %q; want 2 and KLN-4053", r.code, r.stderr)
			}
			for _, format := range []string{"table", "wide"} {
				if r := m.kiln(t, "get", "runs", "--search", "no-run-has-this", "-o", format); r.code != 0 || r.stdout != "" || r.stderr != "No runs found.\n" {
					t.Errorf("get runs -o %s of none: exit %d, %q %q; want nothing on stdout and No runs found. on stderr, as kubectl", format, r.code, r.stdout, r.stderr)
				}
			}
			var none []apiv1.Run
			if r := m.kiln(t, "get", "runs", "--search", "no-run-has-this", "-o", "json"); r.code != 0 || unmarshalList(r.stdout, "RunList", &none) != nil || none == nil || len(none) != 0 || r.stderr != "" {
				t.Errorf("get runs -o json of none: exit %d, %q %q; want a RunList of no items", r.code, r.stdout, r.stderr)
			}
			if r := m.kiln(t, "get", "run", "nosuch-run"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4001") {
				t.Errorf("get run of an unknown ID: exit %d, %q; want 1 and KLN-4001", r.code, r.stderr)
			}
		})
	}
}

// kiln get runs -w prints the table, then a row for a run that appears,
// and again as it changes, embedded and through a server.
func TestGetRunsWatchPrintsChanges(t *testing.T) {
	t.Parallel()
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			first := m.runWorkflow(t, "first", "true")
			cmd := exec.Command(kilnBin, "--home", m.home, "get", "runs", "-w")
			cmd.Env = m.env
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			var mu sync.Mutex
			var lines []string
			go func() {
				for s := bufio.NewScanner(out); s.Scan(); {
					mu.Lock()
					lines = append(lines, s.Text())
					mu.Unlock()
				}
			}()
			has := func(prefix, phase string) func() bool {
				return func() bool {
					mu.Lock()
					defer mu.Unlock()
					return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, prefix) && strings.Contains(l, phase) })
				}
			}
			waitFor(t, "the table with the first run", has(first+" ", "Succeeded"))
			second := m.runWorkflow(t, "second", "sleep 1")
			waitFor(t, "a row of the second run, Succeeded", has(second+" ", "Succeeded"))
			mu.Lock()
			defer mu.Unlock()
			if n := len(slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, "ID ") })); n != 1 {
				t.Errorf("%d headers in %q; want the table's alone", n, lines)
			}
			if n := len(slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !strings.HasPrefix(l, first+" ") })); n != 1 {
				t.Errorf("the first run, which did not change, printed %d times: %q", n, lines)
			}
		})
	}
}
