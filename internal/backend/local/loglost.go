package local

import (
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"kiln.dev/kiln/internal/job"
)

// unwrittenWait bounds how long a log's reader asks the supervisor for an
// attempt's end it holds unwritten.
const unwrittenWait = 5 * time.Second

// lostMarkers writes, after an ended attempt's lines, the marker of each
// log whose loss the log itself could not hold (capture.go): a reader
// sees every loss said once, in the log where it happened or here. An
// attempt that has not ended, or lost nothing, gets none.
func (b *Backend) lostMarkers(id job.AttemptID, w io.Writer) error {
	rec := b.exitRecord(id.String())
	if rec == nil {
		return nil
	}
	var names []string
	for name, l := range rec.LogsLost {
		if l.Unmarked > 0 {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, compareLogs)
	for _, name := range names {
		l := rec.LogsLost[name]
		if _, err := io.WriteString(w, label(name)+marker(l.Unmarked, l.Cause)); err != nil {
			return err
		}
	}
	return nil
}

// compareLogs orders log names as their lines are merged: stdout before
// stderr, then by name.
func compareLogs(a, b string) int {
	ae, be := strings.HasSuffix(a, "stderr"), strings.HasSuffix(b, "stderr")
	switch {
	case ae == be:
		return strings.Compare(a, b)
	case ae:
		return 1
	}
	return -1
}

// exitRecord is attempt id's recorded end: its journal's line, else the
// one the running supervisor holds because the disk refused it; nil if
// neither is there.
func (b *Backend) exitRecord(id string) *statusRecord {
	if recs, err := readRecords(b.cfg.Home, id); err == nil && recs.exit != nil {
		return recs.exit
	}
	return unwrittenExit(b.cfg.Home, id)
}

// unwrittenExit asks home's supervisor, if one runs, for the end of
// attempt id it could not write yet. It never starts a supervisor: one
// that is not running holds nothing unwritten.
func unwrittenExit(home, id string) *statusRecord {
	ctx, cancel := context.WithTimeout(context.Background(), unwrittenWait)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "unix", SocketPath(home))
	if err != nil {
		return nil
	}
	c, err := handshake(ctx, conn, home)
	if err != nil {
		conn.Close()
		return nil
	}
	defer c.Close()
	var r StateReply
	if err := c.call(ctx, "Supervisor.Unwritten", StateArgs{ID: id}, &r); err != nil || !r.Exited {
		return nil
	}
	return &r.Status
}

// Unwritten answers the end of an attempt that the supervisor holds
// because it could not be written to the journal yet (a full disk);
// Exited is false otherwise. It reads no file and changes nothing.
func (s *Supervisor) Unwritten(a StateArgs, r *StateReply) error {
	if err := checkID(a.ID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Status, r.Exited = s.unwritten[a.ID]
	return nil
}
