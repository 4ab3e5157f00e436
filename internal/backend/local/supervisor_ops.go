package local

import (
	"os"
	"slices"
	"syscall"
	"time"
)

// Signal stops an attempt: SIGTERM to each of its process groups now,
// SIGKILL after the grace period to those still running. An attempt not
// started yet is marked so that it never starts. It is a no-op for an
// attempt that has ended.
func (s *Supervisor) Signal(a SignalArgs, _ *Empty) error {
	dir, err := attemptDir(s.home, a.ID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gangs[a.ID]
	_, unwritten := s.unwritten[a.ID]
	switch {
	case !ok && !unwritten && !s.recorded(a.ID):
		if err := os.MkdirAll(dir, 0o755); err != nil { // tells a later start to look at the records
			return err
		}
		now := time.Now().UTC()
		s.recordExit(a.ID, statusRecord{ExitCode: -1, StartError: "stopped before it started", StartedAt: now, FinishedAt: now})
	case !ok || g.stopping:
	case g.members == nil:
		g.stopping, g.grace = true, a.Grace // Start sends the signals once forked
	default:
		s.terminate(g, a.Grace)
	}
	return nil
}

// terminate sends SIGTERM to every running member's group now and SIGKILL
// after grace to those still running. s.mu must be held.
func (s *Supervisor) terminate(g *gang, grace time.Duration) {
	g.stopping = true
	for _, m := range g.members {
		if m.done {
			continue
		}
		m.stopped = true
		pid := m.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		time.AfterFunc(grace, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !m.done {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		})
	}
}

// State reports what is known of an attempt. An attempt started by an
// earlier supervisor whose end is not recorded is lost: nobody waited on
// it. Whatever is left of its process group is killed, so a retry never
// runs beside it.
func (s *Supervisor) State(a StateArgs, r *StateReply) error {
	if err := checkID(a.ID); err != nil {
		return err
	}
	s.mu.Lock()
	g, running := s.gangs[a.ID]
	if running {
		r.Dropped = slices.Clone(g.dropped)
	}
	rec, unwritten := s.unwritten[a.ID]
	s.mu.Unlock()
	switch {
	case running:
		r.Running = true
		return nil
	case unwritten:
		r.Exited, r.Status = true, rec
		return nil
	}
	recs, err := readRecords(s.home, a.ID)
	if err != nil || recs.launch == nil {
		if recs.exit != nil {
			r.Exited, r.Status = true, *recs.exit
		}
		return err
	}
	if recs.exit == nil && recs.launch.Supervisor == s.instance {
		// Started by us, exited between the two checks above.
		recs, err = readRecords(s.home, a.ID)
	}
	switch {
	case err != nil:
		return err
	case recs.exit != nil:
		r.Exited, r.Status = true, *recs.exit
		return nil
	case recs.launch.Supervisor == s.instance:
		return nil
	}
	launch := recs.launch
	for i, pid := range launch.PIDs {
		if launch.started(i, startTicks(pid)) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
	r.Lost = true
	return nil
}

// recorded reports whether attempt id's launch or end is recorded. A
// record that cannot be read counts as one: the attempt is left alone.
func (s *Supervisor) recorded(id string) bool {
	recs, err := readRecords(s.home, id)
	return err != nil || recs.launch != nil || recs.exit != nil
}

// waitExits returns the IDs of attempts that exited after sequence number
// a.After, waiting up to a.Wait for one if there are none yet, or for
// session's standing in the ledger (whether another engine waits, how
// often room was granted to it) to differ from what a says.
func (s *Supervisor) waitExits(session string, a ExitsArgs, r *ExitsReply) error {
	deadline := time.NewTimer(a.Wait)
	defer deadline.Stop()
	for {
		*r = ExitsReply{}
		changed, grant := s.exitsAfter(session, a.After, r)
		if r.Reset || a.After < r.Seq || r.Contended != a.Contended || r.Granted != a.Granted {
			return nil
		}
		select {
		case <-changed:
		case <-grant:
		case <-deadline.C:
			return nil
		}
	}
}

// exitsAfter fills r with the exits after sequence number after (or sets
// r.Reset if they are no longer kept) and session's standing in the
// ledger. The channels it returns are closed on the next exit and the next
// grant of room to session's waiters: a caller that waits on them misses
// nothing between this answer and the next.
func (s *Supervisor) exitsAfter(session string, after uint64, r *ExitsReply) (changed, grant <-chan struct{}) {
	granted, unasked, grant := s.ledger.Granted(session)
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Instance, r.Seq = s.instance, s.base+uint64(len(s.exits))
	r.Reset = after < s.base || after > r.Seq
	r.Contended, r.Granted, r.Unasked = s.ledger.Contended(session), granted, unasked
	if !r.Reset && after < r.Seq {
		r.Exits = append([]Exit(nil), s.exits[after-s.base:]...)
	}
	return s.changed, grant
}

// Info returns the supervisor's instance ID and process ID.
func (s *Supervisor) Info(_ Empty, r *InfoReply) error {
	r.Instance, r.PID = s.instance, os.Getpid()
	return nil
}

// idle reports whether the supervisor has had nothing to do for d.
func (s *Supervisor) idle(d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gangs) > 0 || len(s.leftovers) > 0 || len(s.unwritten) > 0 {
		s.lastBusy = time.Now()
		return false
	}
	return time.Since(s.lastBusy) > d
}

func (s *Supervisor) touch() {
	s.mu.Lock()
	s.lastBusy = time.Now()
	s.mu.Unlock()
}
