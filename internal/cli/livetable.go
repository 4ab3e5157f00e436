package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// screen is the terminal's size, in columns and rows; zero is unbounded.
type screen struct{ cols, rows int }

// liveTable lays out run's live table for a terminal of cols columns:
// its head line, then a row per task (at most maxRows; past that, the
// counts by phase and the tasks that are not simply pending or done).
// No line is wider than cols-1, so that none wraps: long task names lose
// their middle, the message column what is left of the line. cols 0
// leaves lines as long as they come.
func liveTable(run *apiv1.Run, cols, maxRows int) []string {
	lines := []string{headLine(run, cols)}
	nodes := run.Status.Nodes
	if len(nodes) > maxRows {
		lines = append(lines, "  "+phaseCounts(nodes))
		if nodes = interesting(nodes, maxRows); len(nodes) == 0 {
			return fitLines(lines, cols) // the counts say it all: no header over no rows
		}
	}
	rows := [][]string{{"TASK", "PHASE", "ATTEMPT", "DURATION", "MESSAGE"}}
	for _, n := range nodes {
		attempt := "-"
		if k := len(n.Attempts); k > 0 {
			attempt = fmt.Sprint(n.Attempts[k-1].Number)
		}
		rows = append(rows, []string{n.Name, string(n.Phase), attempt, duration(n.StartedAt, n.FinishedAt), oneLine(n.Message)})
	}
	return fitLines(append(lines, layoutRows(rows, cols)...), cols)
}

// headLine is the table's first line: the run's ID, phase, time and
// progress. On a narrow terminal the ID loses its middle, down to 8
// columns, so that the phase, time and counts stay in sight.
func headLine(run *apiv1.Run, cols int) string {
	state := fmt.Sprintf("  %s  %s", run.Status.Phase, duration(run.Status.StartedAt, run.Status.FinishedAt))
	if p := run.Status.Progress; p != nil {
		state += fmt.Sprintf("  %d/%d done", p.Done, p.Total)
	}
	id := string(run.ID)
	if cols > 0 {
		id = squeeze(id, max(cols-1-len("RUN ")-utf8.RuneCountInString(state), 8))
	}
	return "RUN " + id + state
}

// fitLines cuts lines to cols-1 columns; cols 0 leaves them whole.
func fitLines(lines []string, cols int) []string {
	if cols > 0 {
		for i, l := range lines {
			lines[i] = strings.TrimRight(cut(l, cols-1), " ")
		}
	}
	return lines
}

// layoutRows lines up rows in columns two spaces apart after an indent
// of two. With cols set, the first column (the task names) is narrowed,
// to no fewer than 12 columns, so that the columns after it and a
// little of the last fit.
func layoutRows(rows [][]string, cols int) []string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if cols > 0 {
		rest := 2 // the indent
		for _, w := range widths[1 : len(widths)-1] {
			rest += w + 2
		}
		room := cols - 1 - rest - 2 - min(widths[len(widths)-1], 10) // keep 10 columns of message
		widths[0] = min(widths[0], max(room, 12))
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range r {
			if i == 0 {
				c = squeeze(c, widths[0])
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	return out
}

// squeeze shortens s to n columns by cutting out its middle, where long
// generated names (prefix-...-shard-07) differ least: "prefix-..rd-07".
func squeeze(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 5 {
		return string(r[:n])
	}
	tail := (n - 2) / 2
	return string(r[:n-2-tail]) + ".." + string(r[len(r)-tail:])
}

// cut keeps the first n columns of s.
func cut(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// tableRows is how many task rows fit a screen of rows rows shared by
// runs tables: each also has a head line, a column header and maybe a
// line of counts, and one row stays free for the cursor.
func tableRows(rows, runs int) int {
	if rows <= 0 {
		return maxTableRows
	}
	return min(maxTableRows, max(1, (rows-1)/max(runs, 1)-3))
}
