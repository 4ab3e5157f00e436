package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

var _ backend.Logger = (*Backend)(nil)

// logPoll is how often a followed log looks for more.
const logPoll = 200 * time.Millisecond

// logSettle is how long a followed log holds a line back, so that a line
// of another stream written just before it, which the supervisor may not
// have appended yet, still comes first.
const logSettle = 50 * time.Millisecond

// Logs implements backend.Logger from the attempt's files: the lines of
// its processes' stdout and stderr in the order they were written, as
// their time indexes (capture.go) say, a line of a gang's process
// prefixed with its name ("node-0-1 | "), as the kubernetes backend
// writes them. Lines written at the same time keep the order of their
// logs (stdout before stderr, processes by name); an attempt from before
// the indexes has its logs one after the other, in that order.
// Following, it writes what the processes write until the attempt has
// ended (or ctx ends), then what is left. It reads files only, line by
// line: no supervisor need be running, and a big log is never held. Last
// comes the marker of each log that lost bytes the log itself does not
// say (see lostMarkers).
func (b *Backend) Logs(ctx context.Context, id job.AttemptID, opts backend.LogOptions, w io.Writer) error {
	m := newMerger(AttemptDir(b.cfg.Home, id), w, opts)
	defer m.close()
	end := newEndWatch(b.cfg.Home, id.String())
	for {
		ended := !opts.Follow || end.ended()
		if err := m.poll(ended); err != nil {
			return err
		}
		if ended {
			return b.lostMarkers(id, w)
		}
		select {
		case <-ctx.Done():
			if err := m.poll(true); err != nil {
				return err
			}
			return b.lostMarkers(id, w)
		case <-time.After(logPoll):
		}
	}
}

// merger writes the lines of an attempt's logs, merged by time.
type merger struct {
	dir     string
	w       io.Writer
	opts    backend.LogOptions
	polled  bool                  // the first poll is done: opts.Tail is behind it
	streams []*logStream          // by order
	refused map[string]bool       // files not served, said once
	skip    map[string]int        // each process's lines still to drop for opts.Tail
	sticky  *logStream            // a stream in the middle of a line too long to hold
	buf     []byte                // the line being written
	known   map[string]*logStream // streams by file name
}

func newMerger(dir string, w io.Writer, opts backend.LogOptions) *merger {
	return &merger{dir: dir, w: w, opts: opts, refused: map[string]bool{}, skip: map[string]int{}, known: map[string]*logStream{}}
}

func (m *merger) close() {
	for _, s := range m.streams {
		s.close()
	}
}

// logFiles lists an attempt's logs: stdout before stderr, and for a gang
// each process's in name order (ReadDir sorts by name).
func logFiles(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, stream := range []string{"stdout", "stderr"} {
		for _, e := range entries {
			if name := e.Name(); name == stream || strings.HasSuffix(name, "."+stream) {
				out = append(out, name)
			}
		}
	}
	return out
}

// poll writes the lines the logs gained, in time order; following, it
// holds back those too recent to be sure of (logSettle). Last, it writes
// all, each log's unfinished last line ended with a newline.
func (m *merger) poll(last bool) error {
	settled := time.Now().Add(-logSettle)
	if err := m.discover(); err != nil {
		return err
	}
	for _, s := range m.streams {
		if err := s.grow(); err != nil {
			return err
		}
	}
	m.polled = true
	for {
		s, err := m.next(last, settled)
		if s == nil || err != nil {
			return err
		}
		if err := m.emit(s); err != nil {
			return err
		}
	}
}

// discover opens the logs that appeared since the last poll. On the
// first, with opts.Tail, each starts at its last Tail lines, and each
// process drops as many of its first lines as it has over Tail, so that
// it keeps its last Tail lines of stdout and stderr together.
func (m *merger) discover() error {
	counted := map[string]int{}
	for _, name := range logFiles(m.dir) {
		if m.known[name] != nil || m.refused[name] {
			continue
		}
		f, err := openRegular(m.dir, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not there yet
		}
		if err != nil {
			if err := m.refuse(name, err); err != nil {
				return err
			}
			continue
		}
		s := newLogStream(m.dir, name, f)
		if m.opts.Tail > 0 && !m.polled { // a log begun since is new: all of it
			n, err := s.tail(m.opts.Tail)
			if err != nil {
				s.close()
				return err
			}
			counted[s.proc] += n
		}
		m.known[name] = s
		m.streams = append(m.streams, s)
	}
	slices.SortFunc(m.streams, func(a, b *logStream) int { return a.compare(b) })
	for proc, n := range counted {
		m.skip[proc] = max(0, n-m.opts.Tail)
	}
	return nil
}

// refuse says once, in the log itself, that a file is not served: a task
// replaced it with a link out of its attempt directory, a pipe or the like.
func (m *merger) refuse(name string, err error) error {
	m.refused[name] = true
	why := "it is not a regular file inside the attempt's directory"
	if !errors.Is(err, errNotRegular) {
		why = err.Error()
	}
	_, werr := fmt.Fprintf(m.w, "[kiln: %s is not served: %s]\n", name, why)
	return werr
}

// next returns the stream whose next line comes first: the earliest
// written, of the first log on a tie; a line without a time (no index)
// counts as the earliest. A stream in the middle of a long line comes
// first until its end. It returns nil when no line is ready, or, unless
// last, the first one was written after settled.
func (m *merger) next(last bool, settled time.Time) (*logStream, error) {
	if m.sticky != nil {
		if err := m.sticky.fill(last); err != nil || m.sticky.head == nil {
			return nil, err
		}
		return m.sticky, nil
	}
	var first *logStream
	for _, s := range m.streams {
		if err := s.fill(last); err != nil {
			return nil, err
		}
		if s.head != nil && (first == nil || s.head.at.Before(first.head.at)) {
			first = s
		}
	}
	if first == nil || (!last && first.head.known && first.head.at.After(settled)) {
		return nil, nil
	}
	return first, nil
}

// emit writes stream s's next line, or piece of a line, if opts keep it,
// with its time and label before its first piece.
func (m *merger) emit(s *logStream) error {
	l := s.head
	s.head = nil
	first := !s.midLine
	s.midLine = !l.ended
	switch {
	case s.midLine:
		m.sticky = s
	case m.sticky == s:
		m.sticky = nil
	}
	if first {
		s.keep = m.keeps(s, l)
	}
	if !s.keep {
		return nil
	}
	m.buf = m.buf[:0]
	if first {
		if m.opts.Timestamps && l.known {
			m.buf = l.at.AppendFormat(m.buf, timestampLayout)
			m.buf = append(m.buf, ' ')
		}
		m.buf = append(m.buf, s.label...)
	}
	m.buf = append(m.buf, l.b...)
	_, err := m.w.Write(m.buf)
	return err
}

// keeps reports whether opts keep line l of stream s: it is not among the
// first lines its process drops for Tail, and was written at or after
// Since (a line whose time is not known: unless its whole log was
// written before Since).
func (m *merger) keeps(s *logStream, l *logLine) bool {
	if m.skip[s.proc] > 0 {
		m.skip[s.proc]--
		return false
	}
	since := m.opts.Since
	if since.IsZero() {
		return true
	}
	if l.known {
		return !l.at.Before(since)
	}
	fi, err := os.Lstat(filepath.Join(m.dir, s.name))
	return err != nil || !fi.ModTime().Before(since)
}

// timestampLayout is RFC 3339 with nanoseconds, always nine digits, so
// that timed lines line up.
const timestampLayout = "2006-01-02T15:04:05.000000000Z07:00"

// label is the prefix of a log's lines: its process's name, for a gang.
func label(name string) string {
	proc, _, gang := strings.Cut(name, ".")
	if !gang || name == "stdout" || name == "stderr" {
		return ""
	}
	return proc + " | "
}
