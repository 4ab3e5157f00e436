package e2e

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// TestVersionOfTheClientAndTheServer: kiln version prints this binary's
// build, and with --server the server's too, as text and as JSON.
func TestVersionOfTheClientAndTheServer(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	r := kiln(t, home, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "client: kiln ") || !strings.Contains(r.stdout, runtime.Version()) || strings.Contains(r.stdout, "server:") {
		t.Fatalf("kiln version: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	base, admin, _ := startServe(t, newHome(t))
	env := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	r = kilnWithEnv(t, env, home, "version", "-o", "json")
	var v struct {
		Client, Server *struct{ Version, Go, Platform string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Client == nil || v.Server == nil || v.Server.Go != runtime.Version() {
		t.Fatalf("kiln version -o json with --server: exit %d, %q %q (%v)", r.code, r.stdout, r.stderr, err)
	}
	r = kilnWithEnv(t, env, home, "get", "trainjobs", "-o", "json")
	var jobs []apiv1.Run
	if err := unmarshalList(r.stdout, "RunList", &jobs); r.code != 0 || err != nil || jobs == nil || len(jobs) != 0 {
		t.Errorf("kiln get trainjobs -o json with none: exit %d, %q (%v); want a RunList of no items", r.code, r.stdout, err)
	}
}
