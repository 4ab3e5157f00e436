package server

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// partyRole marks the routes other parties' servers call: they need a
// party credential, never an API token, and no API token reaches them.
const partyRole role = -1

// admitParty returns the party calling a federation route: the party its
// bearer credential was issued to, which its Kiln-Party header must
// name. Every refusal is 401 KLN-7001, and is taken from the client
// address's allowance; an accepted call from the party's.
func (s *Server) admitParty(r *http.Request) (*principal, error) {
	p, err := s.callingParty(r)
	if err != nil {
		return nil, cmp.Or(s.clients.take(clientKey(r.RemoteAddr)), err)
	}
	if err := s.tokens.take("party/" + p.party); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Server) callingParty(r *http.Request) (*principal, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return nil, partyRefused("no party credential: send Authorization: Bearer <the credential this server issued to your party>")
	}
	claimed := r.Header.Get(apiv1.PartyHeader)
	if claimed == "" {
		return nil, partyRefused("the request names no party: send the " + apiv1.PartyHeader + " header with your party's name")
	}
	pt, err := s.cfg.Store.PartyByCredential(r.Context(), store.HashCredential(raw))
	if errors.Is(err, store.ErrNotFound) {
		return nil, partyRefused(fmt.Sprintf("the credential of party %q is unknown or revoked", claimed))
	}
	if err != nil {
		return nil, err
	}
	if pt.Name != claimed {
		return nil, partyRefused(fmt.Sprintf("the credential was not issued to party %q (%s header)", claimed, apiv1.PartyHeader))
	}
	return &principal{role: partyRole, party: pt.Name, projects: []string{pt.Project}}, nil
}

func partyRefused(msg string) error {
	return &httpError{status: http.StatusUnauthorized, err: apiv1.Errorf(apiv1.CodePartyCredential, msg)}
}

// announce names this server's party on the answers of the federation
// routes, refusals too: a party registering this one checks whom it
// reached before it trusts it with a credential.
func (s *Server) announce(w http.ResponseWriter, rt route) {
	if rt.role == partyRole && s.cfg.Party != "" {
		w.Header().Set(apiv1.PartyHeader, s.cfg.Party)
	}
}
