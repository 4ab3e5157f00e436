package local

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The supervisor records each attempt's launch and end in its run's
// journal, runs/<run>/_attempts.jsonl, one JSON object per line, instead
// of in files of the attempt's own: one write to a file already open
// costs a fraction of creating, writing and renaming two files per
// attempt. A line is written whole by one write to a file opened for
// appending, so a reader sees every line complete but perhaps the last,
// which a crash may have cut: it is skipped. A later launch line of an
// attempt (an elastic gang's joined members) replaces the earlier one.
// Attempts of homes from before the journal have launch.json and
// status.json in their directory, which are read when the journal has no
// line of them. A task's name never begins with "_", so the journal
// names no task's directory.

// journalName is the journal's file name in its run's directory.
const journalName = "_attempts.jsonl"

// maxOpenJournals bounds the journals the supervisor keeps open.
const maxOpenJournals = 32

// journalEntry is one line of a journal.
type journalEntry struct {
	ID     string        `json:"id"`
	Launch *launchRecord `json:"launch,omitempty"`
	Exit   *statusRecord `json:"exit,omitempty"`
}

// journal appends the supervisor's lines to its runs' journals, keeping
// the files of the runs it wrote last open.
type journal struct {
	home  string
	mu    sync.Mutex
	files map[string]*openJournal // by run
	// torn are the runs whose journal a failed write (a full disk) may
	// have left in the middle of a line: the next line begins on a line
	// of its own.
	torn map[string]bool
}

type openJournal struct {
	f    *os.File
	used time.Time
}

func newJournal(home string) *journal {
	return &journal{home: home, files: map[string]*openJournal{}, torn: map[string]bool{}}
}

// journalPath is the journal of run under home.
func journalPath(home, run string) string {
	return filepath.Join(home, "runs", run, journalName)
}

// runOf is the run part of a checked attempt ID.
func runOf(id string) string {
	run, _, _ := strings.Cut(id, "/")
	return run
}

// append writes e as one line of its run's journal.
func (j *journal) append(e journalEntry) error {
	line, err := e.line()
	if err != nil {
		return err
	}
	run := runOf(e.ID)
	j.mu.Lock()
	defer j.mu.Unlock()
	f, err := j.open(run)
	if err != nil {
		return err
	}
	if j.torn[run] {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		j.torn[run] = true
		j.closeRun(run) // opened afresh for the next line
		return err
	}
	delete(j.torn, run)
	return nil
}

// line is e as a journal line, its newline included. A launch's, and an
// end's of the common kind (plain exit codes, no losses, lists or
// errors), written for every attempt, are written without reflection,
// byte for byte as json.Marshal writes them; any other is json.Marshal's.
func (e *journalEntry) line() ([]byte, error) {
	if e.Exit != nil && e.Launch == nil && plainExit(e.ID, e.Exit) {
		return exitLine(e.ID, e.Exit)
	}
	if e.Exit != nil || e.Launch == nil {
		b, err := json.Marshal(e)
		return append(b, '\n'), err
	}
	l := e.Launch
	b := make([]byte, 0, 160)
	b = append(append(append(b, `{"id":"`...), e.ID...), `","launch":{"pids":`...) // an ID and an instance hold nothing JSON escapes
	b = appendInts(b, len(l.PIDs), func(i int) int64 { return int64(l.PIDs[i]) })
	b = append(b, `,"startTicks":`...)
	b = appendInts(b, len(l.StartTicks), func(i int) int64 { return int64(l.StartTicks[i]) }) //nolint:gosec // ticks since boot
	if len(l.StartTicksUntil) > 0 {
		b = append(b, `,"startTicksUntil":`...)
		b = appendInts(b, len(l.StartTicksUntil), func(i int) int64 { return int64(l.StartTicksUntil[i]) }) //nolint:gosec // ticks since boot
	}
	b = append(append(append(b, `,"supervisor":"`...), l.Supervisor...), '"')
	b, err := appendTimeField(b, "startedAt", l.StartedAt)
	if err != nil {
		return nil, err
	}
	return append(b, "}}\n"...), nil
}

// appendInts appends a JSON array of n numbers, the i-th at(i); null if
// there are none, as json.Marshal writes a nil slice.
func appendInts(b []byte, n int, at func(int) int64) []byte {
	if n == 0 {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, at(i), 10)
	}
	return append(b, ']')
}

// open returns run's journal, opening (and creating) it if it is not
// open, and closing the one used longest ago if too many are. j.mu must
// be held.
func (j *journal) open(run string) (*os.File, error) {
	if o := j.files[run]; o != nil {
		o.used = time.Now()
		return o.f, nil
	}
	path := journalPath(j.home, run)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		f, err = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	if err != nil {
		return nil, err
	}
	if len(j.files) >= maxOpenJournals {
		j.closeOldest()
	}
	j.files[run] = &openJournal{f: f, used: time.Now()}
	return f, nil
}

func (j *journal) closeOldest() {
	var oldest string
	for run, o := range j.files {
		if oldest == "" || o.used.Before(j.files[oldest].used) {
			oldest = run
		}
	}
	j.closeRun(oldest)
}

// closeRun closes run's journal if it is open. j.mu must be held.
func (j *journal) closeRun(run string) {
	if o := j.files[run]; o != nil {
		_ = o.f.Close()
		delete(j.files, run)
	}
}

// forget closes run's journal, before its directory is removed.
func (j *journal) forget(run string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closeRun(run)
}

// closeIdle closes the journals not written for d.
func (j *journal) closeIdle(d time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for run, o := range j.files {
		if time.Since(o.used) > d {
			j.closeRun(run)
		}
	}
}

// attemptRecords is what is recorded of one attempt.
type attemptRecords struct {
	launch *launchRecord
	exit   *statusRecord
}

// readRecords returns what home holds of attempt id (checked): the lines
// of its run's journal, else the files of its directory.
func readRecords(home, id string) (attemptRecords, error) {
	recs, err := scanJournal(journalPath(home, runOf(id)), id)
	if err != nil || recs.launch != nil || recs.exit != nil {
		return recs, err
	}
	dir := filepath.Join(home, "runs", filepath.FromSlash(id))
	var launch launchRecord
	var exit statusRecord
	if found, err := readJSON(filepath.Join(dir, "status.json"), &exit); err != nil || found {
		return attemptRecords{exit: &exit}, err
	}
	if found, err := readJSON(filepath.Join(dir, "launch.json"), &launch); err != nil || found {
		return attemptRecords{launch: &launch}, err
	}
	return attemptRecords{}, nil
}

// scanJournal reads the lines of attempt id from the journal at path.
func scanJournal(path, id string) (attemptRecords, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return attemptRecords{}, nil
	}
	if err != nil {
		return attemptRecords{}, err
	}
	defer f.Close()
	var recs attemptRecords
	_, err = recs.read(f, id)
	return recs, err
}

// add takes in one journal line of the attempt.
func (r *attemptRecords) add(e *journalEntry) {
	if e.Launch != nil {
		r.launch = e.Launch
	}
	if e.Exit != nil && !e.Exit.Running {
		r.exit = e.Exit
	}
}

// read takes in the whole lines of rd about attempt id, and returns how
// many bytes they and the other whole lines span: a last line without
// its newline is being written, or was cut by a crash, and is left.
func (r *attemptRecords) read(rd io.Reader, id string) (int64, error) {
	prefix := linePrefix(id)
	br := bufio.NewReaderSize(rd, 64<<10)
	var whole int64
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return whole, err
		}
		whole += int64(len(line))
		var e journalEntry
		if bytes.HasPrefix(line, prefix) && json.Unmarshal(line, &e) == nil {
			r.add(&e)
		}
	}
}

// linePrefix is how every journal line about attempt id begins: the ID is
// the first field, and an attempt ID holds nothing JSON escapes.
func linePrefix(id string) []byte { return []byte(`{"id":"` + id + `",`) }

// AttemptPIDs returns the process IDs the supervisor recorded for the
// processes of attempt id, in the order of the attempt's spec (joined
// members last), or nil if it recorded no launch.
func AttemptPIDs(home, id string) ([]int, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	recs, err := readRecords(home, id)
	if err != nil || recs.launch == nil {
		return nil, err
	}
	return recs.launch.PIDs, nil
}

// endWatch tells a followed log when its attempt has ended, reading only
// the lines its run's journal gained since it last looked.
type endWatch struct {
	home, id string
	off      int64
	done     bool
}

func newEndWatch(home, id string) *endWatch { return &endWatch{home: home, id: id} }

// ended reports whether the attempt's end is recorded.
func (w *endWatch) ended() bool {
	if !w.done {
		w.done = w.journalEnded() || legacyEnded(w.home, w.id)
	}
	return w.done
}

// journalEnded reads the journal's new whole lines for the attempt's end.
func (w *endWatch) journalEnded() bool {
	f, err := os.Open(journalPath(w.home, runOf(w.id)))
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(w.off, io.SeekStart); err != nil {
		return false
	}
	var recs attemptRecords
	whole, err := recs.read(f, w.id)
	w.off += whole
	return err == nil && recs.exit != nil
}

// legacyEnded reports whether an attempt from before the journal has its
// status file.
func legacyEnded(home, id string) bool {
	_, err := os.Stat(filepath.Join(home, "runs", filepath.FromSlash(id), "status.json"))
	return err == nil
}
