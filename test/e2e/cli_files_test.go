package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// kilnStdin runs kiln on home with env and stdin as its standard input.
func kilnStdin(t *testing.T, env []string, home, stdin string, args ...string) result {
	t.Helper()
	args = append([]string{"--home", home}, args...)
	cmd := exec.Command(kilnBin, args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
	return runKiln(t, cmd, args)
}

// kiln run, submit and apply read their documents from standard input
// the same way: "-" as a file argument or -f -, embedded and through a
// server; run and submit without any file are usage errors.
func TestFilesFromStandardInput(t *testing.T) {
	t.Parallel()
	wf := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: piped}\nspec: {tasks: [{name: t, command: ['true']}]}\n"
	tmpl := "apiVersion: kiln.dev/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: piped-template}\nspec: {tasks: [{name: t, command: ['true']}]}\n"
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{{"run", "-q", "-"}, {"run", "-q", "-f", "-"}} {
				if r := kilnStdin(t, m.env, m.home, wf, args...); r.code != 0 || !strings.Contains(r.stdout, "Succeeded") {
					t.Errorf("kiln %v < workflow: exit %d, %q %q", args, r.code, r.stdout, r.stderr)
				}
			}
			if r := kilnStdin(t, m.env, m.home, tmpl, "apply", "-f", "-"); r.code != 0 {
				t.Errorf("kiln apply -f - < template: exit %d, %q", r.code, r.stderr)
			}
			if r := m.kiln(t, "run"); r.code != 2 || !strings.Contains(r.stderr, "-f -") {
				t.Errorf("kiln run without a file: exit %d, %q; want 2, saying how to read standard input", r.code, r.stderr)
			}
			if m.env == nil {
				return // kiln submit needs a server
			}
			for _, args := range [][]string{{"submit", "-"}, {"submit", "-f", "-"}} {
				r := kilnStdin(t, m.env, m.home, wf, args...)
				id := strings.TrimSpace(r.stdout)
				if r.code != 0 || !strings.HasPrefix(id, "piped-") {
					t.Errorf("kiln %v < workflow: exit %d, %q %q; want the run's ID", args, r.code, r.stdout, r.stderr)
				}
			}
		})
	}
}

// A workflow read from standard input has no directory of its own: its
// tasks start in the current directory, so relative paths in it are
// resolved from there, by kiln run and kiln submit alike.
func TestStandardInputWorkflowsStartInTheCurrentDirectory(t *testing.T) {
	t.Parallel()
	wf := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: relative}\nspec: {tasks: [{name: t, command: [sh, scripts/hello.sh]}]}\n"
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "scripts"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "scripts/hello.sh", "echo hello from the current directory\n")
			in := func(args ...string) result {
				t.Helper()
				cmd := exec.Command(kilnBin, append([]string{"--home", m.home}, args...)...)
				cmd.Dir, cmd.Env, cmd.Stdin = dir, m.env, strings.NewReader(wf)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := 0
				if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
					code = ee.ExitCode()
				}
				return result{stdout.String(), stderr.String(), code}
			}
			if r := in("run", "-q", "-"); r.code != 0 || !strings.Contains(r.stdout, "Succeeded") {
				t.Errorf("kiln run - from the script's directory: exit %d, %q %q", r.code, r.stdout, r.stderr)
			}
			if m.env == nil {
				return // kiln submit needs a server
			}
			r := in("submit", "-")
			id := strings.TrimSpace(r.stdout)
			if r := m.kiln(t, "wait", id); r.code != 0 {
				t.Errorf("kiln submit - from the script's directory: run %q ended with exit %d, %q", id, r.code, r.stderr)
			}
		})
	}
}
