package app

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/federation"
	"kiln.dev/kiln/internal/store"
)

// The App is the federation channel of its party's shares: a share's
// processes send and receive messages through their own server, which
// forwards them to the server of the party they are for, over the party
// link (docs/federation.md, "The federation channel").

// channelPurpose keys the channel tokens apart from other signatures.
const channelPurpose = "federation channel token"

// ChannelEnv implements controller.Channel: the URL of the attempt's
// channel at this server and its token, derived from the sealing key, so
// the same attempt always gets the same and nothing is stored.
func (a *App) ChannelEnv(part apiv1.RunID, share string, n int) ([]string, error) {
	at := federation.ShareAt{Part: part, Share: share, Attempt: n}
	tok, err := a.channelToken(at)
	if err != nil {
		return nil, err
	}
	env := []string{"KILN_FEDERATION_CHANNEL=" + a.channelURL(at), "KILN_FEDERATION_TOKEN=" + tok}
	if a.tlsCert != "" {
		env = append(env, "KILN_FEDERATION_CA="+a.tlsCert) // the server's own certificate
	}
	return env, nil
}

func (a *App) channelURL(at federation.ShareAt) string {
	return strings.TrimRight(a.Advertise, "/") + "/api/v1/channel/" + url.PathEscape(string(at.Part)) + "/" + url.PathEscape(at.Share) + "/" + strconv.Itoa(at.Attempt)
}

func (a *App) channelToken(at federation.ShareAt) (string, error) {
	mac, err := a.Store.Sign(channelPurpose, fmt.Appendf(nil, "%s\x00%s\x00%d", at.Part, at.Share, at.Attempt))
	if err != nil {
		return "", err
	}
	return apiv1.ChannelTokenPrefix + hex.EncodeToString(mac), nil
}

// CheckChannelToken refuses a token that is not at's.
func (a *App) CheckChannelToken(at federation.ShareAt, token string) error {
	want, err := a.channelToken(at)
	if err != nil {
		return err
	}
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return &apiv1.Error{
			Code: apiv1.CodeChannelToken, Object: "Run/" + string(at.Part),
			Message: fmt.Sprintf("the token is not the channel token of attempt %d of share %s", at.Attempt, at.Share),
		}
	}
	return nil
}

// SendMessage forwards piece p of message name from share at to the
// share of party to (as role) of the same attempt, and logs the message
// sent once the receiving party holds all of it. A party that is not
// reached is KLN-7004: the sender sends the piece again.
func (a *App) SendMessage(ctx context.Context, at federation.ShareAt, to, role, name string, p federation.Piece) (federation.Delivered, error) {
	run, ref, err := a.runningShare(ctx, at)
	if err == nil {
		err = checkPiece(at, name, p)
	}
	if err == nil {
		err = a.checkPeer(ctx, at, to, role)
	}
	if err != nil {
		return federation.Delivered{}, err
	}
	m := federation.MessageTo{Run: run.Federation.Run, Task: ref.Task, Attempt: at.Attempt, FromRole: ref.Role, ToRole: role, Name: name}
	var d federation.Delivered
	if to == a.Party {
		d, err = a.DeliverPiece(ctx, a.Party, m, p)
	} else {
		d, err = a.forward(ctx, to, m, p)
	}
	if err != nil || !d.Whole {
		return d, err
	}
	err = a.Store.LogMessage(ctx, at.Part, apiv1.ChannelMessage{
		Direction: apiv1.ChannelSent, Task: ref.Task, Attempt: at.Attempt, Role: ref.Role, Party: to, PeerRole: role,
		Name: name, Size: p.Size, Digest: p.Digest, Chunks: p.Pieces, At: time.Now().UTC(),
	})
	return d, channelError(at, name, err)
}

// forward hands p to party to's server.
func (a *App) forward(ctx context.Context, to string, m federation.MessageTo, p federation.Piece) (federation.Delivered, error) {
	c, err := a.PartyClient(ctx, to)
	if err != nil {
		return federation.Delivered{}, err
	}
	d, err := c.SendPiece(ctx, m, p)
	var coded *apiv1.Error
	if err != nil && !errors.As(err, &coded) {
		return d, &apiv1.Error{
			Code: apiv1.CodePartyUnreachable, Object: "party/" + to,
			Message: fmt.Sprintf("party %s's server was not reached: %v", to, err), Hint: "send the piece again: it resumes where the transfer stopped",
		}
	}
	return d, err
}

// DeliverPiece stores piece p of message m, which party from sends to
// this party's share of m's task as m.ToRole. A party that fills no role
// of the run is told the part does not exist.
func (a *App) DeliverPiece(ctx context.Context, from string, m federation.MessageTo, p federation.Piece) (federation.Delivered, error) {
	id := apiv1.PartID(m.Run, a.Party)
	run, err := a.Store.GetRun(ctx, id)
	if err == nil && (run.Federation == nil || !run.Federation.Part || !slices.Contains(run.Federation.Roles[m.FromRole], from)) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		return federation.Delivered{}, &apiv1.Error{
			Code: apiv1.CodeRunNotFound, Object: "Run/" + string(m.Run),
			Message: fmt.Sprintf("party %s has no part of run %s in which party %s is %s", a.Party, m.Run, from, m.FromRole),
		}
	}
	if err != nil {
		return federation.Delivered{}, err
	}
	if !slices.ContainsFunc(run.Federation.Shares, func(s apiv1.ShareRef) bool { return s.Task == m.Task && s.Role == m.ToRole }) {
		return federation.Delivered{}, &apiv1.Error{
			Code: apiv1.CodeChannelPeer, Object: "Run/" + string(m.Run),
			Message: fmt.Sprintf("party %s runs no share of task %s as %s", a.Party, m.Task, m.ToRole),
		}
	}
	at := federation.ShareAt{Part: id, Attempt: m.Attempt}
	if err := checkPiece(at, m.Name, p); err != nil {
		return federation.Delivered{}, err
	}
	whole, err := a.Store.PutChunk(ctx, id, store.ChannelChunk{
		Key:   store.ChannelKey{Task: m.Task, Attempt: m.Attempt, Role: m.ToRole, Party: from, PeerRole: m.FromRole, Name: m.Name},
		Index: p.Index, Chunks: p.Pieces, Size: p.Size, Digest: p.Digest, Data: p.Data, At: time.Now().UTC(),
	})
	return federation.Delivered{Whole: whole}, channelError(at, m.Name, err)
}

// ReceiveMessage returns piece index of message name from party (as
// role) to share at, waiting up to wait for all of it to arrive. ok is
// false when it has not.
func (a *App) ReceiveMessage(ctx context.Context, at federation.ShareAt, party, role, name string, index int, wait time.Duration) (m apiv1.ChannelMessage, data []byte, ok bool, err error) {
	_, ref, err := a.runningShare(ctx, at)
	if err == nil {
		err = a.checkPeer(ctx, at, party, role)
	}
	if err == nil && !validName(name) {
		err = badMessage(at, name, "its name is not 1 to 128 letters, digits, '.', '_' or '-'")
	}
	if err != nil {
		return m, nil, false, err
	}
	key := store.ChannelKey{Task: ref.Task, Attempt: at.Attempt, Role: ref.Role, Party: party, PeerRole: role, Name: name}
	deadline := time.Now().Add(min(wait, maxChannelWait))
	for {
		m, data, err = a.Store.ReceivedChunk(ctx, at.Part, key, index)
		if !errors.Is(err, store.ErrNotFound) || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return m, nil, false, ctx.Err()
		case <-time.After(channelPoll):
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return m, nil, false, nil
	}
	return m, data, err == nil, err
}

// How a receive waits: the store is polled, so a message that reached
// another replica of this server is seen too.
const (
	maxChannelWait = 20 * time.Second
	channelPoll    = 100 * time.Millisecond
)

// TakeMessage marks message name from party (as role) taken by share at,
// which drops its bytes.
func (a *App) TakeMessage(ctx context.Context, at federation.ShareAt, party, role, name string) error {
	_, ref, err := a.runningShare(ctx, at)
	if err != nil {
		return err
	}
	key := store.ChannelKey{Task: ref.Task, Attempt: at.Attempt, Role: ref.Role, Party: party, PeerRole: role, Name: name}
	err = a.Store.TakeMessage(ctx, at.Part, key, time.Now().UTC())
	if errors.Is(err, store.ErrNotFound) {
		return &apiv1.Error{
			Code: apiv1.CodeChannelMessage, Object: "Run/" + string(at.Part),
			Message: fmt.Sprintf("share %s has no whole message %s from party %s (%s) to take", at.Share, name, party, role),
		}
	}
	return err
}

// runningShare returns the part of share at and the share, after
// checking that attempt at.Attempt of it runs.
func (a *App) runningShare(ctx context.Context, at federation.ShareAt) (*apiv1.Run, apiv1.ShareRef, error) {
	run, err := a.Store.GetRun(ctx, at.Part)
	if err != nil {
		return nil, apiv1.ShareRef{}, err
	}
	var ref apiv1.ShareRef
	if run.Federation != nil && run.Federation.Part {
		if k := slices.IndexFunc(run.Federation.Shares, func(s apiv1.ShareRef) bool { return s.Name == at.Share }); k >= 0 {
			ref = run.Federation.Shares[k]
		}
	}
	var live bool
	if n := run.Status.Node(at.Share); n != nil && ref.Name != "" {
		for _, x := range n.Attempts {
			live = live || (x.Number == at.Attempt && !x.Phase.Done())
		}
	}
	if !live {
		return nil, ref, &apiv1.Error{
			Code: apiv1.CodeShareOrder, Object: "Run/" + string(at.Part),
			Message: fmt.Sprintf("attempt %d of share %s is not running: its channel is closed", at.Attempt, at.Share),
		}
	}
	return run, ref, nil
}

// checkPeer refuses a party and role that is not another share of the
// attempt, as the initiator's start order lists them.
func (a *App) checkPeer(ctx context.Context, at federation.ShareAt, party, role string) error {
	orders, err := a.Store.ShareOrders(ctx, at.Part)
	if err != nil {
		return err
	}
	o := orders[at.Share]
	if o.Attempt == at.Attempt && slices.ContainsFunc(o.Peers, func(p apiv1.Peer) bool { return p.Party == party && p.Role == role }) {
		return nil
	}
	var names []string
	for _, p := range o.Peers {
		names = append(names, p.Party+"/"+p.Role)
	}
	return &apiv1.Error{
		Code: apiv1.CodeChannelPeer, Object: "Run/" + string(at.Part),
		Message: fmt.Sprintf("%s/%s is not another share of attempt %d of share %s; its peers are %s", party, role, at.Attempt, at.Share, strings.Join(names, ", ")),
		Hint:    "send to a party and role of KILN_FEDERATION_PEERS",
	}
}

// messageName is a message's name. Like sha256Form it is compiled on
// first use: its counted repetition makes a large program, which every
// kiln process compiled at start when it was a package variable.
var messageName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`) })

func validName(name string) bool { return messageName().MatchString(name) }

// sha256Form is a digest, or a certificate's pin: sha256:<64 hex digits>.
var sha256Form = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })

// checkPiece refuses a piece that does not fit its message: every piece
// but the last is ChannelChunkSize bytes.
func checkPiece(at federation.ShareAt, name string, p federation.Piece) error {
	pieces := max((p.Size+apiv1.ChannelChunkSize-1)/apiv1.ChannelChunkSize, 1)
	want := int64(apiv1.ChannelChunkSize)
	if int64(p.Index) == pieces-1 {
		want = p.Size - int64(p.Index)*apiv1.ChannelChunkSize
	}
	switch {
	case !validName(name):
		return badMessage(at, name, "its name is not 1 to 128 letters, digits, '.', '_' or '-'")
	case p.Size < 0 || p.Size > apiv1.ChannelMaxMessage:
		return badMessage(at, name, fmt.Sprintf("its size, %d bytes, is not between 0 and %d", p.Size, apiv1.ChannelMaxMessage))
	case !sha256Form().MatchString(p.Digest):
		return badMessage(at, name, "its digest is not sha256:<64 hex digits>")
	case int64(p.Pieces) != pieces || p.Index < 0 || p.Index >= p.Pieces:
		return badMessage(at, name, fmt.Sprintf("piece %d of %d does not fit a message of %d bytes in pieces of %d", p.Index, p.Pieces, p.Size, apiv1.ChannelChunkSize))
	case int64(len(p.Data)) != max(want, 0):
		return badMessage(at, name, fmt.Sprintf("piece %d holds %d bytes, want %d", p.Index, len(p.Data), max(want, 0)))
	}
	return nil
}

func badMessage(at federation.ShareAt, name, why string) error {
	return &apiv1.Error{Code: apiv1.CodeChannelMessage, Object: "Run/" + string(at.Part), Field: "message " + name, Message: "the message " + why}
}

// channelError codes what the store said of a message.
func channelError(at federation.ShareAt, name string, err error) error {
	var phase *store.PhaseError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrConflict):
		return &apiv1.Error{
			Code: apiv1.CodeChannelConflict, Object: "Run/" + string(at.Part), Field: "message " + name,
			Message: "a message of this name was already sent in this attempt, with other content: " + err.Error(),
		}
	case errors.As(err, &phase):
		return &apiv1.Error{
			Code: apiv1.CodeShareOrder, Object: "Run/" + string(at.Part),
			Message: fmt.Sprintf("the part ended (%s): it takes no more messages", phase.Phase),
		}
	}
	return err
}
