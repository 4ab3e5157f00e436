package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/federation"
)

// ChannelHost is the federation channel of this server's shares
// (docs/federation.md): the embedded engine (internal/app) is one. A
// share's processes call it with their attempt's channel token; other
// parties' servers hand it the pieces of messages for this party's
// shares.
type ChannelHost interface {
	CheckChannelToken(at federation.ShareAt, token string) error
	SendMessage(ctx context.Context, at federation.ShareAt, to, role, name string, p federation.Piece) (federation.Delivered, error)
	ReceiveMessage(ctx context.Context, at federation.ShareAt, party, role, name string, index int, wait time.Duration) (apiv1.ChannelMessage, []byte, bool, error)
	TakeMessage(ctx context.Context, at federation.ShareAt, party, role, name string) error
	DeliverPiece(ctx context.Context, from string, m federation.MessageTo, p federation.Piece) (federation.Delivered, error)
}

// channelRole marks the routes a share's processes call with their
// attempt's channel token, checked by the route against its path.
const channelRole role = -2

// channelRoutes are the routes of the federation channel: a share's own
// (channel token) and the receiving end other parties call (party
// credential).
func (s *Server) channelRoutes() []route {
	const share = "/api/v1/channel/{part}/{share}/{attempt}"
	return []route{
		{"PUT " + share + "/out/{party}/{role}/{name}", channelRole, s.sendMessage},
		{"GET " + share + "/in/{party}/{role}/{name}", channelRole, s.receiveMessage},
		{"DELETE " + share + "/in/{party}/{role}/{name}", channelRole, s.takeMessage},
		{"PUT /api/v1/federation/parts/{run}/channel/{task}/{attempt}/{from}/{to}/{name}", partyRole, s.deliverPiece},
		{"GET /api/v1/runs/{id}/messages", viewer, s.channelLog},
	}
}

// channelLog lists the messages a party's part sent and received.
func (s *Server) channelLog(w http.ResponseWriter, r *http.Request, p *principal) error {
	run, err := s.run(r, p)
	if err != nil {
		return err
	}
	if err := federation.NoChannelLog(run, s.cfg.Party); err != nil {
		return err
	}
	list, err := s.cfg.Store.ChannelLog(r.Context(), run.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, apiv1.ChannelLog{Items: nonNil(list)})
	return nil
}

// channel returns the channel host and the attempt of the route's path,
// after checking the request's token against it.
func (s *Server) channel(r *http.Request) (ChannelHost, federation.ShareAt, error) {
	var at federation.ShareAt
	if s.cfg.Channel == nil { // no token is good here
		return nil, at, &httpError{status: http.StatusUnauthorized, err: apiv1.Errorf(apiv1.CodeChannelToken,
			"this server has no federation channel (no party identity): no channel token is good here")}
	}
	n, err := strconv.Atoi(r.PathValue("attempt"))
	if err != nil || n < 1 {
		return nil, at, badRequest("attempt %q is not a number from 1", r.PathValue("attempt"))
	}
	at = federation.ShareAt{Part: apiv1.RunID(r.PathValue("part")), Share: r.PathValue("share"), Attempt: n}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if err := s.cfg.Channel.CheckChannelToken(at, token); err != nil {
		return nil, at, err
	}
	return s.cfg.Channel, at, nil
}

func (s *Server) sendMessage(w http.ResponseWriter, r *http.Request, _ *principal) error {
	ch, at, err := s.channel(r)
	if err != nil {
		return err
	}
	p, err := pieceOf(r)
	if err != nil {
		return err
	}
	d, err := ch.SendMessage(r.Context(), at, r.PathValue("party"), r.PathValue("role"), r.PathValue("name"), p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// receiveMessage answers piece ?piece= of a message, waiting up to
// ?wait= seconds for it to arrive whole; 204 if it has not.
func (s *Server) receiveMessage(w http.ResponseWriter, r *http.Request, _ *principal) error {
	ch, at, err := s.channel(r)
	if err != nil {
		return err
	}
	index, err := intParam(r, "piece", 0)
	if err != nil {
		return err
	}
	wait, err := intParam(r, "wait", 0)
	if err != nil {
		return err
	}
	m, data, ok, err := ch.ReceiveMessage(r.Context(), at, r.PathValue("party"), r.PathValue("role"), r.PathValue("name"), index, time.Duration(wait)*time.Second)
	if err != nil {
		return err
	}
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Kiln-Pieces", strconv.Itoa(m.Chunks))
	h.Set("Kiln-Size", strconv.FormatInt(m.Size, 10))
	h.Set("Kiln-Digest", m.Digest)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}

func (s *Server) takeMessage(w http.ResponseWriter, r *http.Request, _ *principal) error {
	ch, at, err := s.channel(r)
	if err != nil {
		return err
	}
	if err := ch.TakeMessage(r.Context(), at, r.PathValue("party"), r.PathValue("role"), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// deliverPiece takes a piece another party's server forwards.
func (s *Server) deliverPiece(w http.ResponseWriter, r *http.Request, p *principal) error {
	if _, err := s.host(); err != nil {
		return err
	}
	if s.cfg.Channel == nil {
		return &httpError{status: http.StatusNotFound, err: apiv1.Errorf(apiv1.CodeNoPartyIdentity, "this server has no federation channel")}
	}
	n, err := strconv.Atoi(r.PathValue("attempt"))
	if err != nil || n < 1 {
		return badRequest("attempt %q is not a number from 1", r.PathValue("attempt"))
	}
	piece, err := pieceOf(r)
	if err != nil {
		return err
	}
	m := federation.MessageTo{
		Run: apiv1.RunID(r.PathValue("run")), Task: r.PathValue("task"), Attempt: n,
		FromRole: r.PathValue("from"), ToRole: r.PathValue("to"), Name: r.PathValue("name"),
	}
	d, err := s.cfg.Channel.DeliverPiece(r.Context(), p.party, m, piece)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// pieceOf reads a piece: its numbers from the query, its bytes from the
// body.
func pieceOf(r *http.Request) (federation.Piece, error) {
	q := r.URL.Query()
	var p federation.Piece
	var err error
	if p.Index, err = intParam(r, "piece", -1); err != nil {
		return p, err
	}
	if p.Pieces, err = intParam(r, "pieces", -1); err != nil {
		return p, err
	}
	if p.Size, err = strconv.ParseInt(q.Get("size"), 10, 64); err != nil {
		return p, badRequest("size %q is not a number of bytes", q.Get("size"))
	}
	p.Digest = q.Get("digest")
	p.Data, err = readBody(r.Body)
	return p, err
}
