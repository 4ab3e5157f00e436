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
// only: no supervisor need be running.
func (b *Backend) Logs(ctx context.Context, id job.AttemptID, follow bool, w io.Writer) error {
	t := &tail{
		dir: AttemptDir(b.cfg.Home, id), w: w,
		offsets: map[string]int64{}, partial: map[string][]byte{}, refused: map[string]bool{},
	}
	for {
		ended := !follow || exists(filepath.Join(t.dir, "status.json"))
		if err := t.poll(); err != nil {
			return err
		}
		if ended {
			return t.flush()
		}
		select {
		case <-ctx.Done():
			return errors.Join(t.poll(), t.flush())
		case <-time.After(logPoll):
		}
	}
}

// tail copies what log files gained since it last looked.
type tail struct {
	dir     string
	w       io.Writer
	offsets map[string]int64
	partial map[string][]byte // a prefixed file's unfinished last line
	refused map[string]bool   // files not served, said once
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

func (t *tail) poll() error {
	for _, name := range logFiles(t.dir) {
		b, err := t.read(name)
		if err != nil {
			return err
		}
		if err := t.write(name, b); err != nil {
			return err
		}
	}
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

// write copies a task's bytes as they are, and a gang process's whole
// lines with its name before each.
func (t *tail) write(name string, b []byte) error {
	proc, _, gang := strings.Cut(name, ".")
	if !gang || name == "stdout" || name == "stderr" {
		_, err := t.w.Write(b)
		return err
	}
	b = append(t.partial[name], b...)
	cut := bytes.LastIndexByte(b, '\n') + 1
	t.partial[name] = slices.Clone(b[cut:])
	for line := range bytes.Lines(b[:cut]) {
		if _, err := io.WriteString(t.w, proc+" | "+string(line)); err != nil {
			return err
		}
	}
	return nil
}

// flush writes the unfinished last lines, ended by a newline.
func (t *tail) flush() error {
	for _, name := range logFiles(t.dir) {
		if p := t.partial[name]; len(p) > 0 {
			proc, _, _ := strings.Cut(name, ".")
			if _, err := io.WriteString(t.w, proc+" | "+string(p)+"\n"); err != nil {
				return err
			}
			t.partial[name] = nil
		}
	}
	return nil
}
