package slurm

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// record is what the attempt's directory says of its job: the job that
// claimed it and how each process ended, as the batch script wrote them.
type record struct {
	jobID      string       // of the job that claimed the attempt; "" if none did
	started    time.Time    // when the batch script started the processes
	exits      []exitRecord // in the order the processes ended
	notFound   map[int]bool // processes whose command was not there
	aborted    bool         // an abort reached the attempt
	done       bool         // the batch script saw every process end
	finishedAt time.Time
}

// exitRecord is one process's end.
type exitRecord struct {
	proc    int
	code    int // the shell's: 128+n for signal n
	stopped bool
	at      time.Time
}

// readRecord reads the attempt's claim and status files; missing ones
// are an empty record.
func readRecord(dir string) (record, error) {
	var r record
	claim, err := os.ReadFile(filepath.Join(dir, claimFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	r.jobID = strings.TrimSpace(string(claim))
	f, err := os.Open(filepath.Join(dir, statusFile))
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r.parse(strings.Fields(sc.Text()))
	}
	return r, sc.Err()
}

// parse reads one line of the status file. A line cut short (the batch
// script killed while writing it) is skipped.
func (r *record) parse(f []string) {
	if len(f) == 0 {
		return
	}
	switch {
	case f[0] == "start" && len(f) == 2:
		r.started = nanos(f[1])
	case f[0] == "abort":
		r.aborted = true
	case f[0] == "done" && len(f) == 2:
		r.done, r.finishedAt = true, nanos(f[1])
	case f[0] == "notfound" && len(f) == 2:
		if i, err := strconv.Atoi(f[1]); err == nil {
			if r.notFound == nil {
				r.notFound = map[int]bool{}
			}
			r.notFound[i] = true
		}
	case f[0] == "exit" && len(f) == 5:
		i, err1 := strconv.Atoi(f[1])
		code, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil {
			r.exits = append(r.exits, exitRecord{proc: i, code: code, stopped: f[3] == "1", at: nanos(f[4])})
		}
	}
}

func nanos(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// exitOf turns a shell's exit status into an exit code and a signal:
// above 128, the process was ended by signal status-128 (srun reports a
// task killed by a signal so).
func exitOf(status int) (int, string) {
	if status > 128 && status < 128+65 {
		return -1, unix.SignalName(syscall.Signal(status - 128))
	}
	return status, ""
}
