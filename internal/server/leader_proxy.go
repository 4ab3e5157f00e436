package server

import (
	"net/http"
	"net/http/httputil"
	"net/url"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// toLeader serves a federation route at the replica that leads: the
// parts of federated runs are run, and their shares' room reserved, by
// the engine of the leader alone. A follower hands the request, as it
// came, to the leader's address, which checks the credential again; with
// no leader yet, the party is told to ask again (503).
func (s *Server) toLeader(h func(http.ResponseWriter, *http.Request, *principal) error) func(http.ResponseWriter, *http.Request, *principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		if s.cfg.Leadership == nil {
			return h(w, r, p)
		}
		l, self := s.cfg.Leadership()
		if self {
			return h(w, r, p)
		}
		u, err := url.Parse(l.Address)
		if l.Term == 0 || err != nil || u.Host == "" {
			return &httpError{status: http.StatusServiceUnavailable, err: apiv1.Errorf(apiv1.CodeBusy,
				"no replica of this party leads yet: ask again")}
		}
		proxy := httputil.NewSingleHostReverseProxy(u)
		proxy.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
			writeJSON(w, http.StatusBadGateway, map[string][]*apiv1.Error{"errors": {apiv1.Errorf(apiv1.CodePartyUnreachable,
				"this replica of the party hands federation requests to its leader, at "+l.Address+", which did not answer: "+err.Error())}})
		}
		proxy.ServeHTTP(w, r)
		return nil
	}
}
