package slurm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/backend/backendtest"
	"kiln.dev/kiln/internal/job"
	"kiln.dev/kiln/internal/slurmtest"
)

func TestBackendConformance(t *testing.T) {
	t.Parallel()
	backendtest.Run(t, func(t *testing.T) backendtest.Harness {
		return &suiteHarness{cluster: slurmtest.Connect(t), ledgers: t.TempDir(), procs: map[job.AttemptID]int{}}
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
	cluster *slurmtest.Cluster
	ledgers string
	mu      sync.Mutex
	procs   map[job.AttemptID]int
}

func (h *suiteHarness) Backend(t *testing.T) backend.Backend { return newBackend(t, h.cluster) }

func (h *suiteHarness) ledger(id job.AttemptID) string {
	return filepath.Join(h.ledgers, strings.ReplaceAll(id.String(), "/", "_"))
}

func (h *suiteHarness) Shape(_ *testing.T, spec *job.Spec, procs ...backendtest.Proc) *job.Spec {
	h.mu.Lock()
	h.procs[spec.ID] = len(procs)
	h.mu.Unlock()
	for _, p := range procs {
		script := fmt.Sprintf("echo x >> %s; echo '%s'", h.ledger(spec.ID), h.LogLine(p))
		for k, v := range p.Outputs {
			script += fmt.Sprintf(`; printf '%%s' '%s' > "$KILN_OUTPUTS/%s"`, v, k)
		}
		if p.Forever {
			script += "; exec sleep 300"
		} else {
			script += fmt.Sprintf("; sleep 0.3; exit %d", p.Exit)
		}
		spec.Processes = append(spec.Processes, job.Process{Name: p.Name, Host: p.Host, Command: []string{"sh", "-c", script}, Env: os.Environ()})
	}
	return spec
}

func (h *suiteHarness) Started(t *testing.T, id job.AttemptID) int {
	b, err := os.ReadFile(h.ledger(id))
	if errors.Is(err, fs.ErrNotExist) {
		return 0 // none has written it yet
	}
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Count(string(b), "x") / h.procs[id]
}

func (h *suiteHarness) LogLine(p backendtest.Proc) string { return "hello from " + p.Name }
