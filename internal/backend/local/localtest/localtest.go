// Package localtest runs the backend conformance suite's processes on the
// local backend, as shell scripts under a fresh kiln home: the harness of
// the local backend's suite and of the backends that wrap it (federation).
// A test binary that uses it must serve as the supervisor: call
// ServeIfAsked first in its TestMain.
package localtest

import (
	"context"
	"os"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/backend/backendtest"
	"kiln.dev/kiln/internal/backend/local"
	"kiln.dev/kiln/internal/proctest"
)

// supervisorEnv marks the test binary started as a home's supervisor.
const supervisorEnv = "KILN_TEST_SUPERVISOR_HOME"

// ServeIfAsked serves as the local supervisor of the home in
// KILN_TEST_SUPERVISOR_HOME, and exits, when the test binary was started
// as one; else it returns.
func ServeIfAsked() {
	local.RunSandboxIfAsked()
	home := os.Getenv(supervisorEnv)
	if home == "" {
		return
	}
	if err := local.Serve(context.Background(), local.ServeConfig{Home: home, IdleTimeout: time.Minute}); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// Harness is a backendtest.Harness on a fresh kiln home; each process
// appends a line to its attempt's ledger when it starts.
type Harness struct {
	*backendtest.ShellProcs
	home string
}

// NewHarness returns a harness on a fresh home, whose supervisors are
// killed when t ends.
func NewHarness(t *testing.T) *Harness {
	h := &Harness{ShellProcs: backendtest.NewShellProcs(t.TempDir()), home: t.TempDir()}
	t.Cleanup(func() { KillSupervisors(h.home) })
	return h
}

// Local returns a new local backend on the harness's home.
func (h *Harness) Local(t *testing.T) *local.Backend {
	b := local.New(local.Config{Home: h.home, SupervisorCommand: []string{"/usr/bin/env", supervisorEnv + "=" + h.home, os.Args[0]}})
	t.Cleanup(func() { b.Close() })
	return b
}

// Backend implements backendtest.Harness.
func (h *Harness) Backend(t *testing.T) backend.Backend { return h.Local(t) }

// KillSupervisors kills every supervisor started for home: the one
// serving it, and any other still starting, which would find the home
// taken and exit, but could first create files in it. It waits until
// they are gone, so that nothing writes into home while the test's
// cleanup removes it. It never starts a supervisor to ask its PID.
func KillSupervisors(home string) {
	pids := proctest.Marked(supervisorEnv + "=" + home)
	if pid := local.SupervisorPID(home); pid > 0 {
		pids = append(pids, pid)
	}
	proctest.KillAndWait(pids)
}
