package server

import (
	"context"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// PartyKeeper registers the parties this server federates with; the
// embedded engine (internal/app) is one. Credentials go in, and the one
// issued to a party comes out once, when it is issued; no list holds one.
type PartyKeeper interface {
	// AddParty registers a party, or updates it (see apiv1.PartyRequest).
	AddParty(ctx context.Context, req apiv1.PartyRequest) (*apiv1.PartyAdded, error)
	// Parties lists the registered parties, by name.
	Parties(ctx context.Context) ([]apiv1.Party, error)
	// RemoveParty forgets a party: its credential is refused from then
	// on. KLN-7003 if none is registered by that name.
	RemoveParty(ctx context.Context, name string) error
}

// parties is the server's PartyKeeper.
func (s *Server) parties() (PartyKeeper, error) {
	if s.cfg.Parties == nil {
		return nil, &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeBadRequest, "this server keeps no parties")}
	}
	return s.cfg.Parties, nil
}

func (s *Server) listParties(w http.ResponseWriter, r *http.Request, _ *principal) error {
	k, err := s.parties()
	if err != nil {
		return err
	}
	items, err := k.Parties(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.PartyList{Party: s.cfg.Party, Items: nonNil(items)})
	return nil
}

// putParty registers or updates the party of the path: 201 with the
// credential issued to it when it is new, 200 for an update.
func (s *Server) putParty(w http.ResponseWriter, r *http.Request, _ *principal) error {
	k, err := s.parties()
	if err != nil {
		return err
	}
	var req apiv1.PartyRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	if req.Name != "" && req.Name != name {
		return badRequest("the body names party %q, the path %q", req.Name, name)
	}
	req.Name = name
	added, err := k.AddParty(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if added.Created {
		status = http.StatusCreated
	}
	w.Header().Set("Cache-Control", "no-store") // it may hold a credential
	writeJSON(w, status, added)
	return nil
}

func (s *Server) deleteParty(w http.ResponseWriter, r *http.Request, _ *principal) error {
	k, err := s.parties()
	if err != nil {
		return err
	}
	if err := k.RemoveParty(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
