package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// ptyRun runs kiln run on a workflow of n tasks with long names under a
// pseudo-terminal of cols x rows, replays what it wrote on a screen of
// that size and returns the screen.
func ptyRun(t *testing.T, n, cols, rows int) *screen {
	t.Helper()
	scr, _ := ptyRunNamed(t, "wide-names", n, cols, rows)
	return scr
}

// ptyRunNamed is ptyRun of a workflow named name; it returns what kiln
// wrote, too.
func ptyRunNamed(t *testing.T, name string, n, cols, rows int) (*screen, string) {
	t.Helper()
	home := newHome(t)
	var b strings.Builder
	b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: " + name + "}\nspec:\n  tasks:\n")
	for i := range n {
		// Tasks sleep for different times, so the table is drawn with
		// rows in every phase.
		fmt.Fprintf(&b, "  - name: t%02d-tokenize-the-corpus-shard-with-a-long-descriptive-name-%02d\n", i, i)
		fmt.Fprintf(&b, "    command: [/bin/sh, -c, 'sleep 0.%d; echo done']\n", i%6)
	}
	file := writeFile(t, t.TempDir(), "wide.yaml", b.String())
	cmd := exec.Command(kilnBin, "--home", home, "run", "--cpus", "4", file)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var out bytes.Buffer
	_, err = io.Copy(&out, tty) // until kiln exits: then reading the pty fails with EIO
	if err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("kiln run: %v\n%q", err, out.String())
	}
	scr := newScreen(cols, rows)
	scr.write(out.String())
	t.Logf("the screen kiln run ends on, at %dx%d:\n%s", cols, rows, strings.Join(scr.lines(), "\n"))
	// The summary, printed once after the last redraw, may wrap: nothing
	// is drawn over it, and it keeps the whole run ID to copy.
	overflows := slices.DeleteFunc(slices.Clone(scr.overflows), func(l string) bool { return strings.HasPrefix(l, "Run "+name+"-") })
	if len(overflows) > 0 {
		t.Errorf("%d lines ran past column %d, the first: %q", len(overflows), cols, overflows[0])
	}
	if k := strings.Count(out.String(), "\x1b[J"); k < 2 {
		t.Errorf("the table was drawn %d times; want it redrawn as the run went on", k)
	}
	return scr, out.String()
}

// The live table of kiln run, on a terminal of 80 columns and 24 rows,
// with more columns of task names than fit and tasks that go through
// their phases at different times: replayed on a screen model, no line
// ever runs past the last column (a terminal would have wrapped it, and
// the redraw would have left the wrapped half behind), and the screen it
// ends on shows each task once, Succeeded, and no row of an earlier
// table.
func TestTheLiveTableFitsAnEightyColumnTerminal(t *testing.T) {
	t.Parallel()
	const tasks = 12
	scr := ptyRun(t, tasks, 80, 24)
	final := scr.lines()
	screenText := strings.Join(final, "\n")
	for i := range tasks {
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^  t%02d-\S+-%02d +(\S+) `, i, i))
		found := row.FindAllStringSubmatch(screenText, -1)
		if len(found) != 1 || found[0][1] != "Succeeded" {
			t.Errorf("task t%02d: rows %q on the final screen; want one, Succeeded", i, found)
		}
	}
	for _, stale := range []string{"Running", "Pending"} {
		if strings.Contains(screenText, stale) {
			t.Errorf("the final screen still shows a task %s: a stale row", stale)
		}
	}
	if n := strings.Count(screenText, "RUN wide-names-"); n != 1 {
		t.Errorf("the final screen shows %d tables; want one", n)
	}
	if !strings.Contains(screenText, "Succeeded in") {
		t.Errorf("the final screen lacks the run's summary")
	}
}

// On a terminal shorter than the table, the table shrinks to the counts
// by phase and the tasks under way, so the cursor never has to climb past
// the top of the screen to redraw it: the screen kiln run ends on holds
// one table, every task counted Succeeded, and none of the earlier ones.
func TestTheLiveTableFitsAShortTerminal(t *testing.T) {
	t.Parallel()
	scr := ptyRun(t, 12, 80, 12)
	final := strings.Join(scr.lines(), "\n")
	if n := strings.Count(final, "RUN wide-names-"); n != 1 {
		t.Errorf("the final screen shows %d tables' heads; want one", n)
	}
	if !strings.Contains(final, "12 tasks: 12 Succeeded") {
		t.Errorf("the final screen lacks the counts of the 12 tasks, all Succeeded")
	}
	for _, stale := range []string{"Running", "Pending"} {
		if strings.Contains(final, stale) {
			t.Errorf("the final screen still shows a task %s: a stale row", stale)
		}
	}
}

// On a terminal of 60 columns, a run of a long workflow name keeps its
// phase, time and progress in every redraw's head line: the ID loses its
// middle instead.
func TestTheLiveTableHeadKeepsThePhaseWhenNarrow(t *testing.T) {
	t.Parallel()
	const name = "slow-one-with-a-rather-long-descriptive-workflow-name"
	scr, raw := ptyRunNamed(t, name, 3, 60, 20)
	heads := regexp.MustCompile(`RUN (\S+)([^\r\n\x1b]*)`).FindAllStringSubmatch(raw, -1)
	if len(heads) < 2 {
		t.Fatalf("%d head lines in what kiln wrote; want one a redraw", len(heads))
	}
	state := regexp.MustCompile(`^  (Pending|Running|Succeeded)  \S+(  \d+/3 done)?$`)
	for _, h := range heads {
		if !strings.Contains(h[1], "..") || !strings.HasPrefix(h[1], "slow-one-") || !state.MatchString(h[2]) {
			t.Errorf("head %q: want the ID shortened in its middle, then the phase, time and progress", h[0])
		}
	}
	final := strings.Join(scr.lines(), "\n")
	if !regexp.MustCompile(`(?m)^RUN slow-one-\S+\.\.\S+  Succeeded  \S+  3/3 done$`).MatchString(final) {
		t.Errorf("the final screen's head lacks Succeeded and 3/3 done:\n%s", final)
	}
}
