package e2e

import (
	"strings"
	"testing"
	"time"
)

// kiln logs writes a task's stdout and stderr lines in the order it wrote
// them, embedded and through a server, with times that never go back,
// and --tail N keeps its last N lines of both together.
func TestLogsComeInTheOrderWritten(t *testing.T) {
	t.Parallel()
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			id := m.runWorkflow(t, "turns", "echo out1; sleep .2; echo err1 >&2; sleep .2; echo out2; sleep .2; echo err2 >&2; sleep .2; echo out3")
			const want = "out1\nerr1\nout2\nerr2\nout3\n"
			for _, args := range [][]string{{}, {"-f"}} {
				if r := m.kiln(t, append([]string{"logs", id, "main"}, args...)...); r.code != 0 || r.stdout != want {
					t.Errorf("logs %v: exit %d, %q %q; want %q", args, r.code, r.stdout, r.stderr, want)
				}
			}
			if r := m.kiln(t, "logs", id, "main", "--tail", "2"); r.stdout != "err2\nout3\n" {
				t.Errorf("--tail 2: %q %q; want the last two lines of stdout and stderr together", r.stdout, r.stderr)
			}
			stamped := m.kiln(t, "logs", id, "main", "--timestamps")
			var last time.Time
			var texts []string
			for line := range strings.Lines(stamped.stdout) {
				ts, text, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
				at, err := time.Parse(time.RFC3339Nano, ts)
				if err != nil || at.Before(last) {
					t.Errorf("--timestamps line %q: want a time no earlier than the line before's, %v (%v)", line, last, err)
				}
				last = at
				texts = append(texts, text)
			}
			if got := strings.Join(texts, ","); got != "out1,err1,out2,err2,out3" {
				t.Errorf("--timestamps lines, less their times: %s", got)
			}
		})
	}
}

// A training job's processes' lines come interleaved as they wrote them,
// each with its label, embedded and through a server, and --tail 1 keeps
// each process's last line.
func TestGangLogsInterleave(t *testing.T) {
	t.Parallel()
	job := `apiVersion: kiln.dev/v1alpha1
kind: TrainJob
metadata: {name: turns}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    resourcesPerNode: {cpu: 100m}
    command: [sh, -c, 'if [ "$RANK" = 0 ]; then echo a; sleep 1; echo c >&2; else sleep .5; echo b >&2; sleep 1; echo d; fi']
`
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, t.TempDir(), "turns.yaml", job)
			m.kiln(t, "run", "-q", file)
			r := m.kiln(t, "get", "runs", "--search", "turns", "--limit", "1", "-o", "name")
			id := strings.TrimSpace(r.stdout)
			if id == "" {
				t.Fatalf("no run: %q %q", r.stdout, r.stderr)
			}
			if r := m.kiln(t, "logs", id, "trainer"); r.stdout != "node-0-0 | a\nnode-1-0 | b\nnode-0-0 | c\nnode-1-0 | d\n" {
				t.Errorf("logs: exit %d, %q %q; want the processes' lines as written", r.code, r.stdout, r.stderr)
			}
			if r := m.kiln(t, "logs", id, "trainer", "--tail", "1"); r.stdout != "node-0-0 | c\nnode-1-0 | d\n" {
				t.Errorf("--tail 1: %q %q; want each process's last line", r.stdout, r.stderr)
			}
		})
	}
}

// kiln logs -f, started with the task, writes its stdout and stderr lines
// in the order written as they come, embedded and through a server.
func TestFollowedLogsComeInTheOrderWritten(t *testing.T) {
	t.Parallel()
	for _, m := range cliModes(t) {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, t.TempDir(), "turns.yaml", "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: turns}\nspec:\n  tasks:\n"+
				"  - name: main\n    command: [/bin/sh, -c, 'sleep 1; echo out1; sleep .3; echo err1 >&2; sleep .3; echo out2; sleep .3; echo err2 >&2']\n")
			var id string
			if m.env == nil { // embedded: a kiln run beside
				run := startKiln(t, m.home, "run", "-q", file)
				defer func() { _ = run.Wait() }()
				waitFor(t, "the run", func() bool { return len(runs(t, m.home)) == 1 })
				id = string(runs(t, m.home)[0].ID)
			} else {
				sub := m.kiln(t, "submit", file)
				if id = strings.TrimSpace(sub.stdout); sub.code != 0 || id == "" {
					t.Fatalf("submit: exit %d, %q %q", sub.code, sub.stdout, sub.stderr)
				}
			}
			if r := m.kiln(t, "logs", "-f", id, "main"); r.code != 0 || r.stdout != "out1\nerr1\nout2\nerr2\n" {
				t.Errorf("logs -f: exit %d, %q %q; want the lines in the order written", r.code, r.stdout, r.stderr)
			}
		})
	}
}
