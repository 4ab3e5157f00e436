package local

import (
	"crypto/rand"
	"encoding/hex"
)

// session is one engine's connection to the supervisor. The admission
// ledger's holdings and waiters are kept per session: when an engine's
// connection closes (it exited, or died), what it waited for and the
// room it took for attempts it never started are given up. Its methods
// are the supervisor's RPC interface, under the name "Supervisor".
type session struct {
	*Supervisor
	id string
}

func newSession(s *Supervisor) *session {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &session{Supervisor: s, id: hex.EncodeToString(b)}
}

// Start starts an attempt's processes (see Supervisor.Start), holding the
// room the engine admitted it with until it ends.
func (s *session) Start(a StartArgs, r *Empty) error {
	if a.Room != nil {
		s.ledger.Hold(s.id, a.ID, *a.Room)
		s.ledger.Bind(a.ID)
	}
	return s.Supervisor.Start(a, r)
}

// Admit gives back a.Release's room, then answers claims against the
// ledger every engine on the home shares.
func (s *session) Admit(a AdmitArgs, r *AdmitReply) error {
	s.ledger.Release(a.Release...)
	r.Answers = s.ledger.Admit(s.id, a.Capacity, a.Claims)
	return nil
}

// Hold takes room for an attempt an engine found running.
func (s *session) Hold(a HoldArgs, _ *Empty) error {
	s.ledger.Hold(s.id, a.Holder, a.Request)
	s.ledger.Bind(a.Holder)
	return nil
}

// Release gives back holders' room.
func (s *session) Release(a NamesArgs, _ *Empty) error {
	s.ledger.Release(a.Names...)
	return nil
}

// Withdraw removes waiters from the queue.
func (s *session) Withdraw(a NamesArgs, _ *Empty) error {
	s.ledger.Withdraw(a.Names...)
	return nil
}

// end gives up what the session waited for and took without starting.
func (s *session) end() { s.ledger.EndSession(s.id) }
