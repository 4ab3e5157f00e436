package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
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
	home := newHome(t)
	var b strings.Builder
	b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wide-names}\nspec:\n  tasks:\n")
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
	if len(scr.overflows) > 0 {
		t.Errorf("%d lines ran past column %d, the first: %q", len(scr.overflows), cols, scr.overflows[0])
	}
	if k := strings.Count(out.String(), "\x1b[J"); k < 2 {
		t.Errorf("the table was drawn %d times; want it redrawn as the run went on", k)
	}
	return scr
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
