package cli

import (
	"io"
	"strings"
	"unicode/utf8"
)

// grid lines up cells in columns two spaces apart, as kubectl does. Its
// widths are kept, so that rows added later (kiln get runs -w) line up
// with the ones printed first.
type grid struct {
	heads  []string
	rows   [][]string
	widths []int
}

func newGrid(heads []string) *grid {
	t := &grid{heads: heads, widths: make([]int, len(heads))}
	t.fit(heads)
	return t
}

func (t *grid) fit(cells []string) {
	for i, c := range cells {
		if n := utf8.RuneCountInString(c); i < len(t.widths) && n > t.widths[i] {
			t.widths[i] = n
		}
	}
}

// add appends a row.
func (t *grid) add(cells []string) {
	t.fit(cells)
	t.rows = append(t.rows, cells)
}

// write prints the heads and the rows.
func (t *grid) write(w io.Writer) error {
	var b strings.Builder
	b.WriteString(t.line(t.heads))
	for _, r := range t.rows {
		b.WriteString(t.line(r))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// line is one row laid out in the grid's widths (a wider cell pushes
// the rest right), ended by a newline; the last cell is not padded.
func (t *grid) line(cells []string) string {
	var b strings.Builder
	for i, c := range cells {
		b.WriteString(c)
		if i == len(cells)-1 {
			break
		}
		pad := 2
		if i < len(t.widths) {
			pad += t.widths[i] - utf8.RuneCountInString(c)
		}
		b.WriteString(strings.Repeat(" ", max(pad, 1)))
	}
	b.WriteString("\n")
	return b.String()
}
