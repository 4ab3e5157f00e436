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

// The live table of kiln run, on a terminal of 80 columns and 24 rows,
// with more columns of task names than fit and tasks that go through
// their phases at different times: replayed on a screen model, no line
// ever runs past the last column (a terminal would have wrapped it, and
// the redraw would have left the wrapped half behind), and the screen it
// ends on shows each task once, Succeeded, and no row of an earlier
// table.
func TestTheLiveTableFitsAnEightyColumnTerminal(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	const tasks = 12
	var b strings.Builder
	b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: wide-names}\nspec:\n  tasks:\n")
	for i := range tasks {
		// Later tasks sleep longer, so the table is drawn with rows in
		// every phase; the long message makes the last column long too.
		fmt.Fprintf(&b, "  - name: t%02d-tokenize-the-corpus-shard-with-a-long-descriptive-name-%02d\n", i, i)
		fmt.Fprintf(&b, "    command: [/bin/sh, -c, 'sleep 0.%d; echo done']\n", i%6)
	}
	file := writeFile(t, t.TempDir(), "wide.yaml", b.String())
	cmd := exec.Command(kilnBin, "--home", home, "run", "--cpus", "4", file)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
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
	scr := newScreen(80, 24)
	scr.write(out.String())
	final := scr.lines()
	t.Logf("the screen kiln run ends on, at 80x24:\n%s", strings.Join(final, "\n"))
	if len(scr.overflows) > 0 {
		t.Errorf("%d lines ran past column 80, the first: %q", len(scr.overflows), scr.overflows[0])
	}
	if n := strings.Count(out.String(), "\x1b[J"); n < 2 {
		t.Errorf("the table was drawn %d times; want it redrawn as the run went on", n)
	}
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
