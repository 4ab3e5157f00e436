package local

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"time"
)

// logPiece is the most of a line a log holds at once: a longer line is
// written in pieces of about this size, one after another.
const logPiece = 64 << 10

// logStream reads one log file line by line, as it grows, each line
// timed by the log's time index.
type logStream struct {
	name, label string
	proc        string // the process whose log it is ("" for a task's)
	stderr      bool
	f           *os.File
	src         *grownFile
	br          *bufio.Reader
	off         int64  // the log's offset of the next byte br hands out
	pending     []byte // the start of an unfinished line
	times       *timeCursor
	head        *logLine // the next line, read and not yet written
	midLine     bool     // the last piece written did not end its line
	keep        bool     // the line being written in pieces is kept
}

// logLine is one line of a log, or a piece of a long one.
type logLine struct {
	b     []byte
	at    time.Time // when its first byte was written
	known bool      // at is known
	ended bool      // b ends its line
}

func newLogStream(dir, name string, f *os.File) *logStream {
	proc, _, _ := strings.Cut(name, ".")
	if name == "stdout" || name == "stderr" {
		proc = ""
	}
	src := &grownFile{f: f}
	return &logStream{
		name: name, label: label(name), proc: proc, stderr: strings.HasSuffix(name, "stderr"),
		f: f, src: src, br: bufio.NewReaderSize(src, logPiece), times: &timeCursor{dir: dir, name: name + timesSuffix},
	}
}

func (s *logStream) close() {
	s.f.Close()
	s.times.close()
}

// compare orders logs as their lines written at the same time are:
// stdout before stderr, then by name.
func (s *logStream) compare(o *logStream) int {
	if s.stderr != o.stderr {
		if s.stderr {
			return 1
		}
		return -1
	}
	return strings.Compare(s.name, o.name)
}

// grow lets the stream read up to the log's present size. What the log
// holds now is timed by its index, read after: each record is written
// before its bytes.
func (s *logStream) grow() error {
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	s.src.limit, s.times.looked = fi.Size(), false
	return nil
}

// tail starts the stream at its last n lines (an unfinished last line
// counts as one) and returns how many lines that is.
func (s *logStream) tail(n int) (int, error) {
	if err := s.grow(); err != nil {
		return 0, err
	}
	off, lines, err := tailOffset(s.f, s.src.limit, n)
	s.off, s.src.pos = off, off
	return lines, err
}

// fill reads the stream's next line into head, if it has none and the
// log holds one: a whole line, a piece of one too long to hold, or,
// last, the unfinished last line ended with a newline.
func (s *logStream) fill(last bool) error {
	if s.head != nil {
		return nil
	}
	start := s.off - int64(len(s.pending))
	chunk, err := s.br.ReadSlice('\n')
	s.off += int64(len(chunk))
	line := &logLine{ended: err == nil}
	held := len(chunk) + len(s.pending)
	switch {
	case err == nil || errors.Is(err, bufio.ErrBufferFull) || (errors.Is(err, io.EOF) && held >= logPiece && !last):
		line.b = concat(s.pending, chunk)
	case !errors.Is(err, io.EOF):
		return err
	case last && (held > 0 || s.midLine):
		line.b, line.ended = append(concat(s.pending, chunk), '\n'), true
	default:
		s.pending = append(s.pending, chunk...) // its end is still to come
		return nil
	}
	s.pending = nil
	line.at, line.known = s.times.at(start)
	s.head = line
	return nil
}

// concat returns a and b in a slice of its own (b is br's buffer, which
// it reuses).
func concat(a, b []byte) []byte {
	out := make([]byte, 0, len(a)+len(b)+1)
	return append(append(out, a...), b...)
}

// grownFile reads a file from pos up to limit, which grows as the file
// does; at limit it reports io.EOF, and reads on once limit has grown.
type grownFile struct {
	f          *os.File
	pos, limit int64
}

func (g *grownFile) Read(b []byte) (int, error) {
	if g.pos >= g.limit {
		return 0, io.EOF
	}
	b = b[:min(int64(len(b)), g.limit-g.pos)]
	n, err := g.f.ReadAt(b, g.pos)
	g.pos += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

// timeCursor reads a log's time index as its lines are read, in order of
// offset, holding two records at a time.
type timeCursor struct {
	dir, name string
	f         *os.File
	broken    bool  // the index is not a regular file: it is not read
	looked    bool  // this poll found no index: not looked for again until the next
	pos       int64 // bytes of the index read
	buf       []byte
	cur, next timeRecord
	hasCur    bool
	hasNext   bool
}

// timeRecord is one record of a time index: the log's bytes from off
// arrived at at.
type timeRecord struct {
	off int64
	at  time.Time
}

// at returns when the byte at offset off of the log arrived; false if no
// time was recorded for it. Offsets asked for never go back.
func (c *timeCursor) at(off int64) (time.Time, bool) {
	for (c.hasNext || c.read()) && c.next.off <= off {
		c.cur, c.hasCur, c.hasNext = c.next, true, false
	}
	return c.cur.at, c.hasCur
}

// read reads the index's next record into next; false if it holds none
// yet (a record half written is read next time).
func (c *timeCursor) read() bool {
	if len(c.buf) < timeRecordSize && !c.more() {
		return false
	}
	c.next = timeRecord{
		off: int64(binary.LittleEndian.Uint64(c.buf[:8])),
		at:  time.Unix(0, int64(binary.LittleEndian.Uint64(c.buf[8:16]))).UTC(),
	}
	c.buf, c.hasNext = c.buf[timeRecordSize:], true
	return true
}

// more reads the index's next whole records into buf, opening it the
// first time it is there.
func (c *timeCursor) more() bool {
	if c.f == nil {
		if c.broken || c.looked {
			return false
		}
		c.looked = true
		f, err := openRegular(c.dir, c.name)
		if err != nil {
			c.broken = !errors.Is(err, os.ErrNotExist)
			return false
		}
		c.f = f
	}
	b := make([]byte, 256*timeRecordSize)
	n, _ := c.f.ReadAt(b, c.pos)
	n -= n % timeRecordSize
	c.pos += int64(n)
	c.buf = b[:n]
	return n > 0
}

func (c *timeCursor) close() {
	if c.f != nil {
		c.f.Close()
	}
}

// tailOffset returns the offset of the first of the last n lines of f's
// first size bytes, and how many lines there are from it (n, or fewer
// in a shorter log); an unfinished last line counts as one.
func tailOffset(f *os.File, size int64, n int) (int64, int, error) {
	buf := make([]byte, 32<<10)
	found := 0
	for pos := size; pos > 0; {
		chunk := buf[:min(int64(len(buf)), pos)]
		pos -= int64(len(chunk))
		if _, err := f.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' || pos+int64(i) == size-1 {
				continue // a line's own end, not the one before it
			}
			if found++; found == n {
				return pos + int64(i) + 1, n, nil
			}
		}
	}
	if size == 0 {
		return 0, 0, nil
	}
	return 0, found + 1, nil
}
