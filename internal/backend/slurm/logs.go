package slurm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// logPoll is how often a followed log is read again.
const logPoll = 200 * time.Millisecond

// Logs implements backend.Logger from the files srun writes on the shared
// filesystem, logs/<i>.out and logs/<i>.err of process i. Slurm keeps no
// time of a line: lines carry none with Timestamps, and Since keeps every
// line of a log written to at or after it.
func (b *Backend) Logs(ctx context.Context, id job.AttemptID, opts backend.LogOptions, w io.Writer) error {
	spec, err := b.readSpec(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // never launched: no logs
	}
	if err != nil {
		return err
	}
	dir := b.attemptDir(id)
	var streams []*logStream
	for i, p := range spec.Processes {
		label := ""
		if p.Name != "" {
			label = p.Name + " | "
		}
		for _, ext := range []string{".out", ".err"} {
			streams = append(streams, &logStream{path: filepath.Join(dir, logsDir, strconv.Itoa(i)+ext), label: label, proc: i})
		}
	}
	first := true
	for {
		ended := !opts.Follow || b.ended(ctx, spec)
		if err := writeNew(streams, opts, first, ended, w); err != nil {
			return err
		}
		first = false
		if ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return writeNew(streams, opts, false, true, w)
		case <-time.After(logPoll):
		}
	}
}

// ended reports whether the attempt's processes are all gone.
func (b *Backend) ended(ctx context.Context, spec *job.Spec) bool {
	st, err := b.Observe(ctx, spec)
	return err == nil && st.State != job.StateRunning && st.State != job.StateUnknown
}

// logStream is one log file, read on from where the last read stopped.
type logStream struct {
	path, label string
	proc        int
	off         int64
	partial     []byte
}

// lines returns the whole lines written since the last read, and with
// last the line the file ends in without a newline.
func (s *logStream) lines(since time.Time, last bool) ([][]byte, error) {
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !since.IsZero() && fi.ModTime().Before(since) {
		return nil, nil // all written before since
	}
	data, err := io.ReadAll(io.NewSectionReader(f, s.off, 1<<40))
	if err != nil {
		return nil, err
	}
	s.off += int64(len(data))
	data = append(s.partial, data...)
	s.partial = nil
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if last {
				out = append(out, data)
			} else {
				s.partial = bytes.Clone(data)
			}
			break
		}
		out = append(out, data[:i])
		data = data[i+1:]
	}
	return out, nil
}

// writeNew writes the streams' new lines, each process's together; on the
// first read, only the last opts.Tail of each process's.
func writeNew(streams []*logStream, opts backend.LogOptions, first, last bool, w io.Writer) error {
	for i := 0; i < len(streams); {
		proc := streams[i].proc
		var lines [][]byte
		label := streams[i].label
		for ; i < len(streams) && streams[i].proc == proc; i++ {
			l, err := streams[i].lines(opts.Since, last)
			if err != nil {
				return err
			}
			lines = append(lines, l...)
		}
		if first && opts.Tail > 0 && len(lines) > opts.Tail {
			lines = lines[len(lines)-opts.Tail:]
		}
		for _, l := range lines {
			if _, err := io.WriteString(w, label+string(l)+"\n"); err != nil {
				return err
			}
		}
	}
	return nil
}
