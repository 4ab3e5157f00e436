package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server nothing answers at is KLN-5060, exit 1 (not a usage error),
// with a hint naming where the URL came from, for every command and for
// a context; kiln version prints the client's line first all the same.
func TestCLIUnreachableServerIsItsOwnError(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	home := newHome(t)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("contexts:\n- {name: gone, server: '"+base+"'}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wf := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec: {tasks: [{name: t, command: ['true']}]}\n")
	env := withoutServer()
	for _, args := range [][]string{
		{"--server", base, "get", "runs"},
		{"--server", base, "logs", "some-run"},
		{"--server", base, "submit", wf},
		{"--context", "gone", "get", "runs"},
		{"--server", base, "version"},
	} {
		r := kilnWithEnv(t, env, home, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "KLN-5060") || !strings.Contains(r.stderr, base+" cannot be reached") ||
			!strings.Contains(r.stderr, "--server, KILN_SERVER or the current context") {
			t.Errorf("kiln %v: exit %d, %q; want 1 and KLN-5060 naming the URL and where it comes from", args, r.code, r.stderr)
		}
	}
	r := kilnWithEnv(t, env, home, "--server", base, "version")
	if !strings.HasPrefix(r.stdout, "client: kiln ") || strings.Contains(r.stdout, "server:") {
		t.Errorf("kiln version with the server down printed %q; want the client's line alone", r.stdout)
	}
}

// An error reads the same embedded and through a server: the run it is
// about, the flag, the code and the exit status.
func TestCLIErrorsReadTheSameInBothModes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"get", "run", "nope"}, 1, "error: KLN-4001 Run/nope: no such run"},
		{[]string{"describe", "run", "nope"}, 1, "error: KLN-4001 Run/nope: no such run"},
		{[]string{"logs", "nope"}, 1, "error: KLN-4001 Run/nope: no such run"},
		{[]string{"get", "runs", "--limit", "501"}, 2, "error: KLN-4002 --limit: 501 is not a number of runs from 1 to 500 (hint: a page holds"},
		{[]string{"get", "runs", "--limit", "0"}, 2, "error: KLN-4002 --limit: 0 is not"},
		{[]string{"get", "runs", "--phase", "bogus"}, 2, `error: KLN-4050 --phase: "bogus" is not a phase`},
		{[]string{"get", "runs", "--since", "yesterday"}, 2, `error: KLN-4051 --since: "yesterday" is neither`},
		{[]string{"get", "runs", "--until", "-2h"}, 2, "error: KLN-4051 --until:"},
		{[]string{"logs", "nope", "--since", "yesterday"}, 2, "error: KLN-4051 --since:"},
	}
	got := map[string][]string{}
	for _, m := range cliModes(t) {
		for _, c := range cases {
			r := m.kiln(t, c.args...)
			if r.code != c.code || !strings.HasPrefix(r.stderr, c.want) {
				t.Errorf("%s: kiln %v: exit %d, %q; want %d and %q", m.name, c.args, r.code, r.stderr, c.code, c.want)
			}
			got[strings.Join(c.args, " ")] = append(got[strings.Join(c.args, " ")], r.stderr)
		}
	}
	for args, both := range got {
		if len(both) == 2 && both[0] != both[1] {
			t.Errorf("kiln %s: embedded %q, through a server %q; want the same words", args, both[0], both[1])
		}
	}
}

// kiln whoami names the token's role and projects; a bad token's
// KLN-4003 tells a CLI user where tokens go, not an HTTP header.
func TestCLIWhoamiAndTokenHints(t *testing.T) {
	t.Parallel()
	base, admin, _ := startServe(t, newHome(t))
	home := newHome(t)
	env := withoutServer()
	r := kilnWithEnv(t, env, home, "--server", base, "--token", admin, "whoami")
	if r.code != 0 || !strings.Contains(r.stdout, "admin") || !strings.Contains(r.stdout, "*") || !strings.Contains(r.stdout, base) {
		t.Errorf("whoami with the admin token: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = kilnWithEnv(t, env, home, "--server", base, "--token", admin, "whoami", "-o", "jsonpath={.role}")
	if strings.TrimSpace(r.stdout) != "admin" {
		t.Errorf("whoami -o jsonpath={.role}: %q %q", r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"--server", base, "--token", "kln_bogus", "get", "runs"},
		{"--server", base, "--token", "kln_bogus", "whoami"},
		{"--server", base, "whoami"},
	} {
		r := kilnWithEnv(t, env, home, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "KLN-4003") || !strings.Contains(r.stderr, "--token or KILN_TOKEN") ||
			strings.Contains(r.stderr, "Authorization") {
			t.Errorf("kiln %v: exit %d, %q; want KLN-4003 with a hint naming --token and KILN_TOKEN", args, r.code, r.stderr)
		}
	}
	r = kilnWithEnv(t, env, home, "whoami")
	if r.code != 0 || !strings.Contains(r.stdout, "the local user") || !strings.Contains(r.stdout, "every right") {
		t.Errorf("embedded whoami: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}
