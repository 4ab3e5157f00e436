package server

import (
	"errors"
	"net/http"
)

// Whoami is who the request's token names, for a client (the web UI) to
// show it and offer only what its role may do.
type Whoami struct {
	// Name is the token's name; empty without a known token.
	Name string `json:"name"`
	// Role is viewer, editor or admin; empty without a known token.
	Role string `json:"role"`
	// Projects are those the token may touch; "*" is every project.
	Projects []string `json:"projects"`
	// Authenticated says the request carried a known, unrevoked token.
	Authenticated bool `json:"authenticated"`
}

// whoami answers who the request's bearer token names. It is public: a
// request without a token, or with one the server does not know, is
// answered too, as unauthenticated, so that a client can tell a bad
// token from a failure.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request, _ *principal) error {
	me := Whoami{Projects: []string{}}
	p, err := s.principal(r)
	var he *httpError
	switch {
	case errors.As(err, &he) && he.status == http.StatusUnauthorized:
	case err != nil:
		return err
	default:
		me = Whoami{Name: p.token.Name, Role: p.token.Role, Projects: p.token.Projects, Authenticated: true}
		w.Header().Set("Kiln-Role", p.token.Role)
	}
	writeJSON(w, http.StatusOK, me)
	return nil
}
