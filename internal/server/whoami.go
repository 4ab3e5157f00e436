package server

import (
	"errors"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// whoami answers who the request's bearer token names. It is public: a
// request without a token, or with one the server does not know, is
// answered too, as unauthenticated, so that a client can tell a bad
// token from a failure.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request, _ *principal) error {
	me := apiv1.Whoami{Projects: []string{}}
	p, err := s.principal(r)
	var he *httpError
	switch {
	case errors.As(err, &he) && he.status == http.StatusUnauthorized:
	case err != nil:
		return err
	default:
		me = apiv1.Whoami{Name: p.token.Name, Role: p.token.Role, Projects: p.token.Projects, Authenticated: true}
		w.Header().Set("Kiln-Role", p.token.Role)
	}
	writeJSON(w, http.StatusOK, me)
	return nil
}
