package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// approve approves ({"approve": true}) or rejects a waiting approval gate.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, p *principal) error {
	var body apiv1.Approval
	return s.gateInput(w, r, p, &body, func() (apiv1.GateInput, error) {
		if body.Approve == nil {
			return apiv1.GateInput{}, badRequest(`the body needs "approve": true approves, false rejects`)
		}
		return apiv1.GateInput{Approve: body.Approve, Reason: body.Reason}, nil
	})
}

// signal sends a value to a waiting signal gate.
func (s *Server) signal(w http.ResponseWriter, r *http.Request, p *principal) error {
	var body apiv1.Signal
	return s.gateInput(w, r, p, &body, func() (apiv1.GateInput, error) {
		if body.Value == nil {
			return apiv1.GateInput{}, badRequest(`the body needs "value", as a string`)
		}
		return apiv1.GateInput{Value: body.Value, Reason: body.Reason}, nil
	})
}

// gateInput reads the body into body, makes the input of it with input,
// and sends it from the caller to the node named in the path. The run is
// looked up first, so that a run the caller may not see is answered as
// one that does not exist, whatever the body.
func (s *Server) gateInput(w http.ResponseWriter, r *http.Request, p *principal, body any, input func() (apiv1.GateInput, error)) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	if err := decodeJSON(r, body); err != nil {
		return err
	}
	in, err := input()
	if err != nil {
		return err
	}
	in.By = p.sender()
	node := r.PathValue("node")
	if err := s.cfg.Engine.SendGateInput(r.Context(), run.ID, node, in); err != nil {
		return err
	}
	sent := "signal"
	if in.Approve != nil {
		sent = map[bool]string{true: "approve", false: "reject"}[*in.Approve]
	}
	writeJSON(w, http.StatusAccepted, apiv1.GateSent{Run: run.ID, Task: node, Sent: sent, By: in.By})
	return nil
}

// decodeJSON reads a body that is one JSON object with only v's fields.
func decodeJSON(r *http.Request, v any) error {
	b, err := readBody(r.Body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("the body is not the JSON object this route takes: %v", err)
	}
	if dec.More() {
		return badRequest("the body holds more than one JSON value")
	}
	return nil
}

// sender names the caller in what it sends: its token's name, ID and
// role, as `ci (token 1f2e3d4c, editor)`.
func (p *principal) sender() string {
	t := p.token
	switch {
	case t == nil && p.party != "":
		return "party " + p.party
	case t == nil:
		return ""
	case t.Name == "":
		return fmt.Sprintf("token %s (%s)", t.ID, t.Role)
	}
	return fmt.Sprintf("%s (token %s, %s)", t.Name, t.ID, t.Role)
}
