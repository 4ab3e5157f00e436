package e2e

import (
	"os"
	"strings"
	"testing"
)

// TestSubmitThenWait: kiln submit prints the new run's ID at once (the
// file from standard input too) and kiln wait waits for runs to end,
// exiting 0 only if every one succeeded, as argo submit and argo wait do.
func TestSubmitThenWait(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, newHome(t))
	env := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	ok := writeFile(t, t.TempDir(), "ok.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: ok}\nspec:\n  tasks:\n  - {name: a, command: [sleep, \"1\"]}\n")
	r := kilnWithEnv(t, env, home, "submit", ok)
	id := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(id, "ok-") || strings.Contains(id, "\n") {
		t.Fatalf("kiln submit: exit %d, %q %q; want the run's ID alone", r.code, r.stdout, r.stderr)
	}
	bad := "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: bad}\nspec:\n  tasks:\n  - {name: a, command: [/bin/false]}\n"
	r = partyServer{home: home, env: env}.kilnStdin(t, bad, "submit", "-")
	badID := strings.TrimSpace(r.stdout)
	if r.code != 0 || !strings.HasPrefix(badID, "bad-") {
		t.Fatalf("kiln submit -: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "wait", id); r.code != 0 || !strings.Contains(r.stdout, "Run "+id+" Succeeded") {
		t.Errorf("kiln wait %s: exit %d, %q %q; want 0 and its summary", id, r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "wait", id, badID); r.code != 1 || !strings.Contains(r.stderr, "Run "+badID+" Failed") {
		t.Errorf("kiln wait %s %s: exit %d, %q %q; want 1, the failed run named", id, badID, r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, env, home, "get", "runs", "-o", "name"); r.code != 0 || strings.Join(strings.Fields(r.stdout), " ") != badID+" "+id {
		t.Errorf("kiln get runs -o name: exit %d, %q; want %s then %s, one a line", r.code, r.stdout, badID, id)
	}
	if r := kiln(t, home, "submit", ok); r.code != 2 || !strings.Contains(r.stderr, "needs a server") {
		t.Errorf("kiln submit without a server: exit %d, %q; want 2 saying a server is needed", r.code, r.stderr)
	}
}
