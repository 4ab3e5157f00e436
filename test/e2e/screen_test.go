package e2e

import (
	"strconv"
	"strings"
)

// screen is a small model of a VT100 screen, enough to replay what kiln
// writes to a terminal: printable text, CR, LF (scrolling at the bottom),
// backspace, and the CSI sequences cursor up/down/forward/back/position
// (A B C D H), erase in display (J) and in line (K); others are read and
// ignored. Unlike a terminal, it remembers each time text would have run
// past the last column (a terminal would wrap it onto the next line
// silently), so a test can tell a line that fit from one that wrapped.
type screen struct {
	cols, rows int
	cells      [][]rune
	x, y       int
	overflows  []string // the lines that ran past the last column, as they were when it happened
}

func newScreen(cols, rows int) *screen {
	s := &screen{cols: cols, rows: rows}
	for range rows {
		s.cells = append(s.cells, s.blank())
	}
	return s
}

func (s *screen) blank() []rune { return []rune(strings.Repeat(" ", s.cols)) }

// write replays out on the screen.
func (s *screen) write(out string) {
	r := []rune(out)
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case c == '\x1b' && i+1 < len(r) && r[i+1] == '[':
			i = s.csi(r, i+2)
		case c == '\x1b':
			i++ // a two-character escape: nothing kiln draws with
		case c == '\r':
			s.x = 0
		case c == '\n':
			s.lineFeed()
		case c == '\b':
			s.x = max(0, s.x-1)
		case c < ' ':
		default:
			s.put(c)
		}
	}
}

func (s *screen) put(c rune) {
	if s.x >= s.cols { // a terminal would wrap here
		s.overflows = append(s.overflows, string(s.cells[s.y]))
		s.x = 0
		s.lineFeed()
	}
	s.cells[s.y][s.x] = c
	s.x++
}

func (s *screen) lineFeed() {
	if s.y == s.rows-1 {
		s.cells = append(s.cells[1:], s.blank())
		return
	}
	s.y++
}

// csi reads the CSI sequence whose parameters start at r[i], applies it
// and returns the index of its final byte.
func (s *screen) csi(r []rune, i int) int {
	start := i
	for i < len(r) && (r[i] >= '0' && r[i] <= '9' || r[i] == ';' || r[i] == '?') {
		i++
	}
	if i >= len(r) {
		return len(r) - 1
	}
	params := strings.Split(string(r[start:i]), ";")
	n := func(k, def int) int {
		if k < len(params) {
			if v, err := strconv.Atoi(strings.TrimPrefix(params[k], "?")); err == nil && v > 0 {
				return v
			}
		}
		return def
	}
	switch r[i] {
	case 'A':
		s.y = max(0, s.y-n(0, 1))
	case 'B':
		s.y = min(s.rows-1, s.y+n(0, 1))
	case 'C':
		s.x = min(s.cols-1, s.x+n(0, 1))
	case 'D':
		s.x = max(0, s.x-n(0, 1))
	case 'H':
		s.y, s.x = min(s.rows, n(0, 1))-1, min(s.cols, n(1, 1))-1
	case 'J':
		s.eraseDisplay(n(0, 0))
	case 'K':
		for x := s.x; x < s.cols; x++ {
			s.cells[s.y][x] = ' '
		}
	}
	return i
}

func (s *screen) eraseDisplay(mode int) {
	from, to := s.y+1, s.rows
	switch mode {
	case 0:
		for x := min(s.x, s.cols); x < s.cols; x++ {
			s.cells[s.y][x] = ' '
		}
	case 1:
		from, to = 0, s.y
	default:
		from = 0
	}
	for y := from; y < to; y++ {
		s.cells[y] = s.blank()
	}
}

// lines are the screen's rows, trailing blanks cut.
func (s *screen) lines() []string {
	out := make([]string, s.rows)
	for y, row := range s.cells {
		out[y] = strings.TrimRight(string(row), " ")
	}
	return out
}
