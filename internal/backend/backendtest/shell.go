package backendtest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"kiln.dev/kiln/internal/job"
)

// ShellProcs shapes the suite's processes as sh scripts that append a
// line to their attempt's ledger, a file under a directory the test and
// the processes share, when they start. A Harness whose backend runs
// commands on this machine's filesystem (local processes, a cluster that
// shares it) embeds it for Shape, Started and LogLine.
type ShellProcs struct {
	ledgers string
	mu      sync.Mutex
	procs   map[job.AttemptID]int
}

// NewShellProcs returns shell processes whose ledgers live under dir.
func NewShellProcs(dir string) *ShellProcs {
	return &ShellProcs{ledgers: dir, procs: map[job.AttemptID]int{}}
}

func (s *ShellProcs) ledger(id job.AttemptID) string {
	return filepath.Join(s.ledgers, strings.ReplaceAll(id.String(), "/", "_"))
}

// Shape implements Harness.
func (s *ShellProcs) Shape(_ *testing.T, spec *job.Spec, procs ...Proc) *job.Spec {
	s.mu.Lock()
	s.procs[spec.ID] = len(procs)
	s.mu.Unlock()
	for _, p := range procs {
		script := fmt.Sprintf("echo x >> %s; echo '%s'", s.ledger(spec.ID), s.LogLine(p))
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

// Started implements Harness: the ledger's lines over the attempt's
// processes.
func (s *ShellProcs) Started(t *testing.T, id job.AttemptID) int {
	b, err := os.ReadFile(s.ledger(id))
	if errors.Is(err, fs.ErrNotExist) {
		return 0 // none has written it yet
	}
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(string(b), "x") / s.procs[id]
}

// LogLine implements Harness.
func (s *ShellProcs) LogLine(p Proc) string { return "hello from " + p.Name }
