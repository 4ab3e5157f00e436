package e2e

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// kiln run through a server rides out the server's restart: it says once
// that it lost the connection, waits for the server (started again on
// the same home and port, it adopts the run) and exits with the run's
// true outcome, not KLN-5060.
func TestRunThroughAServerOutlivesTheServersRestart(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	shared := sharedDir(t)
	base, admin, serve := startServe(t, home)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ledger, release := filepath.Join(shared, "ledger"), filepath.Join(shared, "release")
	wf := writeFile(t, t.TempDir(), "wf.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: outlives}\nspec:\n  tasks:\n"+
		"  - name: main\n    command: [/bin/sh, -c, 'echo started >> "+ledger+"; while [ ! -e "+release+" ]; do sleep 0.05; done']\n")
	cmd := exec.Command(kilnBin, "--home", t.TempDir(), "run", wf)
	cmd.Env = append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor(t, "the task to start", func() bool { return lines(ledger) == 1 })
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = serve.Wait()
	waitFor(t, "kiln run to notice", func() bool { return strings.Contains(stderr.String(), "lost the connection to the server at "+base) })
	startServeAs(t, home, nil, nil, "--addr", u.Host) // the same home and port
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if err != nil || !strings.Contains(stdout.String(), "Succeeded in") || strings.Count(stderr.String(), "lost the connection") != 1 ||
		strings.Contains(stderr.String(), "KLN-5060") || lines(ledger) != 1 {
		t.Errorf("kiln run: %v, ledger %d lines\nstdout:\n%s\nstderr:\n%s", err, lines(ledger), stdout.String(), stderr.String())
	}
}
