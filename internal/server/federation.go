package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// PartyHost runs this server's parts of federated runs for the parties
// that initiate them; the embedded engine (internal/app) is one. from is
// the calling party, authenticated by its credential. A run from did not
// initiate is answered as if it did not exist (KLN-4001).
type PartyHost interface {
	CreatePart(ctx context.Context, from string, req apiv1.PartRequest) (apiv1.PartStatus, error)
	PartStatus(ctx context.Context, from string, run apiv1.RunID) (apiv1.PartStatus, error)
	OrderShare(ctx context.Context, from string, run apiv1.RunID, task string, o apiv1.ShareOrder) (apiv1.ShareStatus, error)
	StopPart(ctx context.Context, from string, run apiv1.RunID, how string) error // "cancel", "end", "fail", "suspend", "resume"
	CheckPart(ctx context.Context, from string, req apiv1.PartRequest) error
	PartOutput(ctx context.Context, from string, run apiv1.RunID, task, param string) (string, error)
	PartArtifact(ctx context.Context, from string, run apiv1.RunID, task, name string) ([]byte, error)
}

// federationRoutes are the routes other parties' servers call.
func (s *Server) federationRoutes() []route {
	const part = "/api/v1/federation/parts/{run}"
	return []route{
		{"GET /api/v1/federation/party", partyRole, s.hello},
		{"POST /api/v1/federation/check", partyRole, s.checkPart},
		{"PUT " + part, partyRole, s.toLeader(s.createPart)},
		{"GET " + part, partyRole, s.toLeader(s.partStatus)},
		{"PUT " + part + "/shares/{task}", partyRole, s.toLeader(s.orderShare)},
		{"GET " + part + "/outputs/{task}/{param}", partyRole, s.partOutput},
		{"GET " + part + "/outputs/{task}/artifacts/{name}", partyRole, s.partArtifact},
		{"POST " + part + "/cancel", partyRole, s.toLeader(s.stopPart("cancel"))},
		{"POST " + part + "/end", partyRole, s.toLeader(s.stopPart("end"))},
		{"POST " + part + "/fail", partyRole, s.toLeader(s.stopPart("fail"))},
		{"POST " + part + "/suspend", partyRole, s.toLeader(s.stopPart("suspend"))},
		{"POST " + part + "/resume", partyRole, s.toLeader(s.stopPart("resume"))},
	}
}

// host is the PartyHost of a server with a party identity.
func (s *Server) host() (PartyHost, error) {
	if s.cfg.Party == "" {
		return nil, &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeNoPartyIdentity,
			"this server has no party identity: it takes part in no federated run")}
	}
	if s.cfg.PartyHost == nil {
		return nil, &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeNoPartyIdentity,
			"this server is party "+s.cfg.Party+", but its engine hosts no parts of federated runs")}
	}
	return s.cfg.PartyHost, nil
}

// hello tells a party whose credential this server accepts who it is.
func (s *Server) hello(w http.ResponseWriter, _ *http.Request, _ *principal) error {
	if s.cfg.Party == "" {
		_, err := s.host()
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.PartyHello{Party: s.cfg.Party})
	return nil
}

func (s *Server) createPart(w http.ResponseWriter, r *http.Request, p *principal) error {
	h, err := s.host()
	if err != nil {
		return err
	}
	req, err := partRequest(r, p)
	if err != nil {
		return err
	}
	run := apiv1.RunID(r.PathValue("run"))
	switch {
	case req.Run == "":
		req.Run = run
	case req.Run != run:
		return badRequest("the body's run %q is not the run of the path, %q", req.Run, run)
	}
	status, err := h.CreatePart(r.Context(), p.party, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, status)
	return nil
}

// partRequest reads a party's request about a part of a run it
// initiates: the caller is its initiator, and it carries the workflow.
func partRequest(r *http.Request, p *principal) (apiv1.PartRequest, error) {
	var req apiv1.PartRequest
	if err := decodePartyJSON(r, &req); err != nil {
		return req, err
	}
	switch {
	case req.Initiator == "":
		req.Initiator = p.party
	case req.Initiator != p.party:
		return req, badRequest("party %q cannot ask about a part of a run that party %q initiates", p.party, req.Initiator)
	}
	if req.Workflow == nil {
		return req, badRequest("the request carries no workflow")
	}
	return req, nil
}

// partOutput hands a party of the run an output parameter of this
// party's share that the workflow sends it.
func (s *Server) partOutput(w http.ResponseWriter, r *http.Request, p *principal) error {
	h, err := s.host()
	if err != nil {
		return err
	}
	v, err := h.PartOutput(r.Context(), p.party, apiv1.RunID(r.PathValue("run")), r.PathValue("task"), r.PathValue("param"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.PartOutput{Value: v})
	return nil
}

// partArtifact hands a party of the run an artifact (a file) of this
// party's share that the workflow sends it, with its digest.
func (s *Server) partArtifact(w http.ResponseWriter, r *http.Request, p *principal) error {
	h, err := s.host()
	if err != nil {
		return err
	}
	data, err := h.PartArtifact(r.Context(), p.party, apiv1.RunID(r.PathValue("run")), r.PathValue("task"), r.PathValue("name"))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Kiln-Digest", "sha256:"+hex.EncodeToString(sum[:]))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}

// checkPart tells an initiator, before it submits its run, whether this
// party would create its part: 204, or the refusal CreatePart would give.
func (s *Server) checkPart(w http.ResponseWriter, r *http.Request, p *principal) error {
	h, err := s.host()
	if err != nil {
		return err
	}
	req, err := partRequest(r, p)
	if err != nil {
		return err
	}
	if err := h.CheckPart(r.Context(), p.party, req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) partStatus(w http.ResponseWriter, r *http.Request, p *principal) error {
	h, err := s.host()
	if err != nil {
		return err
	}
	status, err := h.PartStatus(r.Context(), p.party, apiv1.RunID(r.PathValue("run")))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, status)
	return nil
}

func (s *Server) orderShare(w http.ResponseWriter, r *http.Request, p *principal) error {
	h, err := s.host()
	if err != nil {
		return err
	}
	var o apiv1.ShareOrder
	if err := decodePartyJSON(r, &o); err != nil {
		return err
	}
	if err := checkOrder(o); err != nil {
		return err
	}
	status, err := h.OrderShare(r.Context(), p.party, apiv1.RunID(r.PathValue("run")), r.PathValue("task"), o)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, status)
	return nil
}

// checkOrder refuses an order no share can follow.
func checkOrder(o apiv1.ShareOrder) error {
	switch o.Action {
	case apiv1.OrderReserve, apiv1.OrderStart, apiv1.OrderRelease, apiv1.OrderAbort, apiv1.OrderSkip:
	default:
		return badRequest("order action %q is not one of reserve, start, release, abort, skip", o.Action)
	}
	if o.Attempt < 1 {
		return badRequest("order %s names attempt %d; attempts count from 1", o.Action, o.Attempt)
	}
	return nil
}

func (s *Server) stopPart(how string) func(http.ResponseWriter, *http.Request, *principal) error {
	return func(w http.ResponseWriter, r *http.Request, p *principal) error {
		h, err := s.host()
		if err != nil {
			return err
		}
		if err := h.StopPart(r.Context(), p.party, apiv1.RunID(r.PathValue("run")), how); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// decodePartyJSON reads a party's JSON body. Unknown fields are let
// through: the parties of a run may run kiln of different versions.
func decodePartyJSON(r *http.Request, v any) error {
	b, err := readBody(r.Body)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return badRequest("the body is not the JSON object this route takes: %v", err)
	}
	return nil
}

// partyStatus is the HTTP status of a party error with code c, and
// whether c is one.
func partyStatus(c apiv1.Code) (int, bool) {
	switch c {
	case apiv1.CodePartyCredential, apiv1.CodeChannelToken:
		return http.StatusUnauthorized, true
	case apiv1.CodeChannelConflict:
		return http.StatusConflict, true
	case apiv1.CodeNoPartyIdentity, apiv1.CodePartyNotFound:
		return http.StatusNotFound, true
	case apiv1.CodePartyUnreachable:
		return http.StatusBadGateway, true
	case apiv1.CodePartyNoCredential, apiv1.CodePartyMismatch:
		return http.StatusConflict, true
	}
	return 0, false
}
