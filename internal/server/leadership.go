package server

import (
	"fmt"
	"time"
)

// leadership says, for /readyz, who runs the engine: a line for the
// leader and one for this server's role.
func (s *Server) leadership() string {
	if s.cfg.Leadership == nil {
		return "role: leader (no replicas: this server runs an engine of its own)\n"
	}
	l, self := s.cfg.Leadership()
	if l.Term == 0 {
		return "leader: none yet\nrole: follower\n"
	}
	role := "follower"
	if self {
		role = "leader"
	}
	return fmt.Sprintf("leader: %s at %s, term %d, since %s\nrole: %s\n",
		l.Holder, l.Address, l.Term, l.Since.UTC().Format(time.RFC3339), role)
}
