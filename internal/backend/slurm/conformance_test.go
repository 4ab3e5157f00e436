package slurm

import (
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/backend/backendtest"
	"kiln.dev/kiln/internal/slurmtest"
)

func TestBackendConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backendtest.Harness {
		return &suiteHarness{ShellProcs: backendtest.NewShellProcs(t.TempDir()), cluster: slurmtest.Connect(t)}
	})
}

// newBackend opens a backend on the test's cluster and directory.
func newBackend(t *testing.T, c *slurmtest.Cluster) *Backend {
	t.Helper()
	b, err := New(t.Context(), Config{Dir: c.Dir, Conf: c.Conf, Prefix: c.Prefix, Poll: 100 * time.Millisecond, SbatchArgs: []string{slurmtest.Exclude}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// suiteHarness runs the suite's processes as shell scripts on the test
// cluster; each appends a line to its attempt's ledger when it starts.
type suiteHarness struct {
	*backendtest.ShellProcs
	cluster *slurmtest.Cluster
}

func (h *suiteHarness) Backend(t *testing.T) backend.Backend { return newBackend(t, h.cluster) }
