package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Contexts name servers with their tokens and projects, as kubectl's do:
// kiln config lists them (saying whether a token is set, never printing
// it), switches the current one, and commands use it; --context picks
// another for one command, --server "" the embedded engine, and a name
// the file lacks is KLN-4052.
func TestContextsPickTheServerTokenAndProject(t *testing.T) {
	t.Parallel()
	serverHome := newHome(t)
	base, admin, _ := startServeAs(t, serverHome, nil, nil, "--isolation", "none")
	home := newHome(t)
	config := "# contexts of the test\ncontexts:\n" +
		"- {name: prod, server: '" + base + "', token: " + admin + ", project: vision}\n" +
		"- {name: wrong-token, server: '" + base + "', token: kln_not_a_token}\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := withoutServer()
	list := kilnWithEnv(t, env, home, "config", "get-contexts")
	if list.code != 0 || strings.Contains(list.stdout, admin) || !strings.Contains(list.stdout, "prod") || !strings.Contains(list.stdout, "set") {
		t.Fatalf("get-contexts: exit %d, %q; want both contexts, tokens as set, never shown", list.code, list.stdout)
	}
	if r := kilnWithEnv(t, env, home, "config", "current-context"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4052") {
		t.Errorf("current-context with none set: exit %d, %q; want 1 and KLN-4052", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "config", "use-context", "staging"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4052") || !strings.Contains(r.stderr, "prod, wrong-token") {
		t.Errorf("use-context of a name the file lacks: exit %d, %q", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "config", "use-context", "prod"); r.code != 0 {
		t.Fatalf("use-context prod: exit %d, %q", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "config", "current-context"); strings.TrimSpace(r.stdout) != "prod" {
		t.Errorf("current-context after use-context prod: %q %q", r.stdout, r.stderr)
	}
	if kept, _ := os.ReadFile(filepath.Join(home, "config.yaml")); string(kept) != config+"current-context: prod\n" {
		t.Errorf("use-context changed more than its line (the comment, the lists' indentation):\n%s", kept)
	}
	for _, format := range []string{"json", "yaml"} {
		r := kilnWithEnv(t, env, home, "config", "get-contexts", "-o", format)
		if r.code != 0 || strings.Contains(r.stdout, admin) || !strings.Contains(r.stdout, "wrong-token") || !strings.Contains(r.stdout, "tokenSet") {
			t.Errorf("get-contexts -o %s: exit %d, %q %q; want the contexts, tokens as set, never shown", format, r.code, r.stdout, r.stderr)
		}
	}
	file := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: ctx}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	if r := kilnWithEnv(t, env, home, "run", "-q", file); r.code != 0 {
		t.Fatalf("kiln run through the current context: exit %d, %q", r.code, r.stderr)
	}
	served := kilnWithEnv(t, env, serverHome, "--server", "", "get", "runs", "-o", "jsonpath={.items[*].project}")
	if strings.TrimSpace(served.stdout) != "vision" {
		t.Errorf("the server's runs are of projects %q (%s); want the run, in the context's project vision", served.stdout, served.stderr)
	}
	if r := kilnWithEnv(t, env, home, "--server", "", "get", "runs", "-o", "name"); r.code != 0 || r.stdout != "" {
		t.Errorf("--server \"\" reads the embedded engine's home, which ran nothing: exit %d, %q", r.code, r.stdout)
	}
	if r := kilnWithEnv(t, env, home, "--context", "wrong-token", "get", "runs"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4003") {
		t.Errorf("--context wrong-token: exit %d, %q; want 1 and the server's KLN-4003", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "--context", "wrong-token", "--token", admin, "get", "runs", "-o", "name"); r.code != 0 || strings.TrimSpace(r.stdout) == "" {
		t.Errorf("--token over the context's: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "--context", "nope", "get", "runs"); r.code != 1 || !strings.Contains(r.stderr, "KLN-4052") {
		t.Errorf("--context nope: exit %d, %q; want 1 and KLN-4052", r.code, r.stderr)
	}
}

// withoutServer is this process's environment without KILN_SERVER and
// KILN_TOKEN, so that the configuration file decides.
func withoutServer() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KILN_SERVER=") && !strings.HasPrefix(kv, "KILN_TOKEN=") {
			env = append(env, kv)
		}
	}
	return env
}
