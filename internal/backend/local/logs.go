package local

import (
	"bytes"
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

// Logs implements backend.Logger from the attempt's files: a task's
// stdout, then its stderr; a gang's processes' in turn, each line
// prefixed with its process ("node-0-1 | "), as the kubernetes backend
// writes them. Following, it writes what the processes write until the
// attempt has ended (or ctx ends), then what is left. It reads files
// only: no supervisor need be running. Tail, Since and Timestamps work
// on each stream's lines, timed by the log's time index (capture.go).
func (b *Backend) Logs(ctx context.Context, id job.AttemptID, opts backend.LogOptions, w io.Writer) error {
	t := newTail(AttemptDir(b.cfg.Home, id), w, opts)
	for {
		ended := !opts.Follow || exists(filepath.Join(t.dir, "status.json"))
		if err := t.poll(ended); err != nil || ended {
			return err
		}
		select {
		case <-ctx.Done():
			return t.poll(true)
		case <-time.After(logPoll):
		}
	}
}

// tail copies what log files gained since it last looked.
type tail struct {
	dir     string
	w       io.Writer
	opts    backend.LogOptions
	lines   bool // opts asks for lines, not bytes as they are
	polled  bool // the first poll is done: opts.Tail is behind it
	offsets map[string]int64
	partial map[string][]byte // a file's unfinished last line, where lines are kept whole
	refused map[string]bool   // files not served, said once
	times   map[string]*timeReader
}

func newTail(dir string, w io.Writer, opts backend.LogOptions) *tail {
	return &tail{
		dir: dir, w: w, opts: opts, lines: opts.Tail > 0 || !opts.Since.IsZero() || opts.Timestamps,
		offsets: map[string]int64{}, partial: map[string][]byte{}, refused: map[string]bool{}, times: map[string]*timeReader{},
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

// poll copies what each log gained; last, it ends each one's unfinished
// last line with a newline, after the rest of that log.
func (t *tail) poll(last bool) error {
	for _, name := range logFiles(t.dir) {
		b, err := t.read(name)
		if err != nil {
			return err
		}
		t.readTimes(name)
		if err := t.write(name, b); err != nil {
			return err
		}
		if last {
			if err := t.flush(name); err != nil {
				return err
			}
		}
	}
	t.polled = true
	return nil
}

func (t *tail) read(name string) ([]byte, error) {
	f, err := openRegular(t.dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // not there yet
	}
	if err != nil {
		return nil, t.refuse(name, err)
	}
	defer f.Close()
	if _, seen := t.offsets[name]; !seen && t.opts.Tail > 0 && !t.polled { // a log begun since is new: all of it
		if t.offsets[name], err = tailOffset(f, t.opts.Tail); err != nil {
			return nil, err
		}
	}
	if _, err := f.Seek(t.offsets[name], io.SeekStart); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	t.offsets[name] += int64(len(b))
	return b, err
}

// refuse says once, in the log itself, that a file is not served: a task
// replaced it with a link out of its attempt directory, a pipe or the like.
func (t *tail) refuse(name string, err error) error {
	if t.refused[name] {
		return nil
	}
	t.refused[name] = true
	why := "it is not a regular file inside the attempt's directory"
	if !errors.Is(err, errNotRegular) {
		why = err.Error()
	}
	_, werr := fmt.Fprintf(t.w, "[kiln: %s is not served: %s]\n", name, why)
	return werr
}

// label is the prefix of a log's lines: its process's name, for a gang.
func label(name string) string {
	proc, _, gang := strings.Cut(name, ".")
	if !gang || name == "stdout" || name == "stderr" {
		return ""
	}
	return proc + " | "
}

// write copies a task's bytes as they are, and a gang process's whole
// lines with its name before each; asked for lines (tail, since,
// timestamps), every log's whole lines.
func (t *tail) write(name string, b []byte) error {
	prefix := label(name)
	if prefix == "" && !t.lines {
		_, err := t.w.Write(b)
		return err
	}
	start := t.offsets[name] - int64(len(b)) - int64(len(t.partial[name])) // where b's first line begins
	b = append(t.partial[name], b...)
	cut := bytes.LastIndexByte(b, '\n') + 1
	t.partial[name] = slices.Clone(b[cut:])
	for line := range bytes.Lines(b[:cut]) {
		if err := t.line(name, prefix, start, line); err != nil {
			return err
		}
		start += int64(len(line))
	}
	return nil
}

// line writes one line of log name that begins at offset off, if it is
// one opts keep, with its time and label.
func (t *tail) line(name, prefix string, off int64, line []byte) error {
	if !t.lines {
		_, err := io.WriteString(t.w, prefix+string(line))
		return err
	}
	at, known := t.timeOf(name, off)
	if !t.opts.Since.IsZero() && ((known && at.Before(t.opts.Since)) || (!known && t.writtenBefore(name, t.opts.Since))) {
		return nil
	}
	if t.opts.Timestamps && known {
		prefix = at.Format(timestampLayout) + " " + prefix
	}
	_, err := io.WriteString(t.w, prefix+string(line))
	return err
}

// timestampLayout is RFC 3339 with nanoseconds, always nine digits, so
// that timed lines line up.
const timestampLayout = "2006-01-02T15:04:05.000000000Z07:00"

// timeOf returns when the byte at off of log name was written, from its
// time index; false if none was recorded (an attempt started before
// kiln recorded them).
func (t *tail) timeOf(name string, off int64) (time.Time, bool) {
	if r := t.times[name]; r != nil {
		return r.idx.at(off)
	}
	return time.Time{}, false
}

// readTimes reads what log name's time index gained. Its records are
// written before their bytes, so, read after them, it times them all.
func (t *tail) readTimes(name string) {
	if t.opts.Since.IsZero() && !t.opts.Timestamps {
		return
	}
	r := t.times[name]
	if r == nil {
		r = &timeReader{dir: t.dir, name: name + timesSuffix}
		t.times[name] = r
	}
	r.read()
}

// writtenBefore reports whether all of log name was written before since,
// by its modification time: for a log that has no time index.
func (t *tail) writtenBefore(name string, since time.Time) bool {
	fi, err := os.Lstat(filepath.Join(t.dir, name))
	return err == nil && fi.ModTime().Before(since)
}

// flush writes log name's unfinished last line, ended by a newline.
func (t *tail) flush(name string) error {
	p := t.partial[name]
	if len(p) == 0 {
		return nil
	}
	t.partial[name] = nil
	return t.line(name, label(name), t.offsets[name]-int64(len(p)), append(p, '\n'))
}

// tailOffset returns the offset of the first of the last n lines of f;
// an unfinished last line counts as one.
func tailOffset(f *os.File, n int) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := fi.Size()
	buf := make([]byte, 32<<10)
	for pos := end; pos > 0; {
		size := min(int64(len(buf)), pos)
		pos -= size
		chunk := buf[:size]
		if _, err := f.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' || pos+int64(i) == end-1 {
				continue // a line's own end, not the one before it
			}
			if n--; n == 0 {
				return pos + int64(i) + 1, nil
			}
		}
	}
	return 0, nil
}
