package local

import (
	"crypto/rand"
	"encoding/hex"
)

// session is one engine's connection to the supervisor. The admission
// ledger's holdings and waiters are kept per session: when an engine's
// connection closes (it exited, or died), what it waited for and the
// room it took for attempts it never started are given up. Its methods are
// the calls an engine makes by name (served.go's methods).
type session struct {
	*Supervisor
	id string
}

func newSession(s *Supervisor) *session {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &session{Supervisor: s, id: hex.EncodeToString(b)}
}

// Admit gives back a.Release's room, then answers claims against the
// ledger every engine on the home shares. If a claim now waits, every
// engine's watcher wakes to learn whether another engine waits.
func (s *session) Admit(a AdmitArgs, r *AdmitReply) error {
	s.ledger.Release(a.Release...)
	r.Answers = s.ledger.Admit(s.id, a.Capacity, a.Claims)
	for _, ans := range r.Answers {
		if !ans.Admitted {
			s.mu.Lock()
			s.wake()
			s.mu.Unlock()
			break
		}
	}
	return nil
}

// Hold takes room for a.Holds, fit or not, then gives back a.Release's.
func (s *session) Hold(a HoldArgs, _ *Empty) error {
	for _, c := range a.Holds {
		s.ledger.Hold(s.id, c)
	}
	s.ledger.Release(a.Release...)
	return nil
}

// Release gives back holders' room.
func (s *session) Release(a NamesArgs, _ *Empty) error {
	s.ledger.Release(a.Names...)
	return nil
}

// SetQuotas replaces the projects' quotas on the ledger every engine on
// the home shares (see resource.Ledger.SetQuotas).
func (s *session) SetQuotas(a QuotasArgs, _ *Empty) error {
	s.ledger.SetQuotas(a.Quotas)
	s.mu.Lock()
	s.wake()
	s.mu.Unlock()
	return nil
}

// Withdraw removes waiters from the queue.
func (s *session) Withdraw(a NamesArgs, _ *Empty) error {
	s.ledger.Withdraw(a.Names...)
	return nil
}

// end gives up what the session waited for and took without starting,
// and wakes every engine's writer: another engine may no longer wait.
func (s *session) end() {
	s.ledger.EndSession(s.id)
	s.mu.Lock()
	s.wake()
	s.mu.Unlock()
}
