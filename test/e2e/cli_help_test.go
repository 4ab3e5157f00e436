package e2e

import (
	"strings"
	"testing"
)

// Help lists the flags of the backend only on the commands that start an
// engine; every command still takes them, as scripts pass them.
func TestHelpShowsBackendFlagsWhereTheyApply(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	backendFlags := []string{"--backend", "--kubeconfig", "--kube-context", "--namespace", "--kiln-image", "--gang-scheduler", "--clean-policy", "--clean-ttl"}
	for _, c := range []struct {
		args  []string
		shown bool
	}{
		{[]string{"--help"}, false},
		{[]string{"get", "runs", "--help"}, false},
		{[]string{"help", "describe"}, false},
		{[]string{"run", "--help"}, true},
		{[]string{"serve", "--help"}, true},
		{[]string{"logs", "--help"}, true},
	} {
		r := kiln(t, home, c.args...)
		if r.code != 0 || !strings.Contains(r.stdout, "--home") {
			t.Fatalf("kiln %v: exit %d, %q", c.args, r.code, r.stderr)
		}
		for _, f := range backendFlags {
			if got := strings.Contains(r.stdout, f+" string"); got != c.shown { // the flag's line
				t.Errorf("kiln %v lists %s: %v; want %v", c.args, f, got, c.shown)
			}
		}
	}
	if r := kiln(t, home, "get", "runs", "--namespace", "ml", "--backend", "local"); r.code != 0 {
		t.Errorf("kiln get runs with backend flags: exit %d, %q; want them taken as before", r.code, r.stderr)
	}
}
