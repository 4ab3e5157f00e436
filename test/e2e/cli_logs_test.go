package e2e

import (
	"strings"
	"testing"
	"time"
)

// kiln logs --node TASK is argo's way of naming the task kiln logs RUN
// TASK names, embedded and through a server; naming two tasks, or a
// --since that is no time, is a usage error.
func TestLogsNodeNamesTheTask(t *testing.T) {
	t.Parallel()
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			id := m.runWorkflow(t, "three-lines", "echo one; echo two; echo three")
			byArg := m.kiln(t, "logs", id, "main")
			byNode := m.kiln(t, "logs", id, "--node", "main")
			if byArg.code != 0 || byNode.stdout != byArg.stdout || !strings.Contains(byNode.stdout, "two\n") {
				t.Errorf("logs RUN main: %q; logs RUN --node main: exit %d, %q %q; want the same lines", byArg.stdout, byNode.code, byNode.stdout, byNode.stderr)
			}
			if r := m.kiln(t, "logs", id, "main", "--node", "other"); r.code != 2 || !strings.Contains(r.stderr, "KLN-4002") {
				t.Errorf("two tasks named: exit %d, %q; want 2 and KLN-4002", r.code, r.stderr)
			}
			if r := m.kiln(t, "logs", id, "--node", "main", "--since", "lately"); r.code != 2 || !strings.Contains(r.stderr, "--since") {
				t.Errorf("--since lately: exit %d, %q; want 2 naming --since", r.code, r.stderr)
			}
		})
	}
}

// kiln logs --tail, --since and --timestamps reach the engine's logs
// (apiv1.LogQuery), whose reading of them the server side builds: the
// last line alone, none written after a time to come, each line after
// the time it was written.
func TestLogsTailSinceTimestamps(t *testing.T) {
	t.Parallel()
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			id := m.runWorkflow(t, "three-lines", "echo one; echo two; echo three")
			tail := m.kiln(t, "logs", id, "--node", "main", "--tail", "1")
			if tail.code != 0 {
				t.Fatalf("--tail 1: exit %d, %q", tail.code, tail.stderr)
			}
			if tail.stdout != "three\n" {
				t.Errorf("--tail 1: %q, want the last line", tail.stdout)
			}
			if r := m.kiln(t, "logs", id, "--node", "main", "--since", "2099-01-01T00:00:00Z"); r.code != 0 || r.stdout != "" {
				t.Errorf("--since a time to come: exit %d, %q %q; want no lines", r.code, r.stdout, r.stderr)
			}
			stamped := m.kiln(t, "logs", id, "--node", "main", "--timestamps")
			lines := strings.Split(strings.TrimSpace(stamped.stdout), "\n")
			for i, want := range []string{"one", "two", "three"} {
				at, text, _ := strings.Cut(lines[min(i, len(lines)-1)], " ")
				if _, err := time.Parse(time.RFC3339Nano, at); err != nil || text != want {
					t.Errorf("--timestamps line %d: %q; want an RFC 3339 time, then %q", i, lines[min(i, len(lines)-1)], want)
				}
			}
		})
	}
}
