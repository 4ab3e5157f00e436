package controller

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// tallied records what the controller told its metrics.
type tallied struct {
	mu     sync.Mutex
	events []string
	noMetrics
}

func (m *tallied) add(s string) { m.mu.Lock(); m.events = append(m.events, s); m.mu.Unlock() }

func (m *tallied) RunStarted(time.Duration) { m.add("run started") }
func (m *tallied) RunEnded(p apiv1.Phase, _ time.Duration) {
	m.add("run " + string(p))
}
func (m *tallied) TaskEnded(p apiv1.Phase) { m.add("task " + string(p)) }

func (m *tallied) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(slices.Values(m.events))
}

// TestTallyCountsEachEndOnce: a task that fails once and succeeds on its
// retry is one task that succeeded, not a failure too; a task after one
// that failed for good ends Skipped; the run ends once, and its retry
// counts its new end but no second queue wait.
func TestTallyCountsEachEndOnce(t *testing.T) {
	m := &tallied{}
	e := newEngine(t, 4, func(c *Config) { c.Metrics = m })
	marker := t.TempDir() + "/once"
	id := e.submit(t, fmt.Sprintf(`spec:
  tasks:
  - {name: flaky, command: [sh, -c, 'test -e %[1]s || { touch %[1]s; exit 1; }'], retries: {limit: 1}}
  - {name: bad, command: [sh, -c, 'test -e %[1]s.ok'], dependsOn: [flaky]}
  - {name: after, command: ['true'], dependsOn: [bad]}
`, marker), nil)
	if r := e.wait(t, id); r.Status.Phase != apiv1.PhaseFailed {
		t.Fatalf("run ended %s, want Failed", r.Status.Phase)
	}
	want := []string{"run Failed", "run started", "task Failed", "task Skipped", "task Succeeded"}
	if got := m.seen(); !slices.Equal(got, want) {
		t.Fatalf("the metrics were told %q, want %q", got, want)
	}
	touch(t, marker+".ok")
	if err := e.Retry(t.Context(), id, apiv1.RetryRequest{}); err != nil {
		t.Fatal(err)
	}
	if r := e.wait(t, id); r.Status.Phase != apiv1.PhaseSucceeded {
		t.Fatalf("the retried run ended %s, want Succeeded", r.Status.Phase)
	}
	want = []string{"run Failed", "run Succeeded", "run started", "task Failed", "task Skipped", "task Succeeded", "task Succeeded", "task Succeeded"}
	if got := m.seen(); !slices.Equal(got, want) {
		t.Errorf("after the retry the metrics were told %q, want %q", got, want)
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
