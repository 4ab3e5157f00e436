package store

import (
	"context"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Channel keeps the federation channel of a party's part of a federated
// run: the pieces of each message its shares receive, until the share
// takes it or the part ends, and the log of every message sent and
// received (docs/federation.md).
type Channel interface {
	// PutChunk stores piece c.Index of the message c.Key names, received
	// by part id. A piece stored before changes nothing; a message of that
	// key with another digest, size or count of pieces is ErrConflict. It
	// reports whether the message is now whole: its log row then has At.
	// ErrNotFound for an unknown run, a *PhaseError for one that ended.
	PutChunk(ctx context.Context, id apiv1.RunID, c ChannelChunk) (whole bool, err error)
	// ReceivedChunk returns the log row of the received message key names
	// and its piece index. ErrNotFound while the message is not whole, and
	// once it was taken.
	ReceivedChunk(ctx context.Context, id apiv1.RunID, key ChannelKey, index int) (apiv1.ChannelMessage, []byte, error)
	// TakeMessage marks the whole received message key names taken at at,
	// and drops its pieces. Taken again, nothing changes; ErrNotFound if
	// it is not whole.
	TakeMessage(ctx context.Context, id apiv1.RunID, key ChannelKey, at time.Time) error
	// LogMessage logs m, whole, for part id: sent, or received by other
	// means than pieces (an output parameter fetched). Logged again with
	// the same digest, nothing changes; with another, ErrConflict.
	LogMessage(ctx context.Context, id apiv1.RunID, m apiv1.ChannelMessage) error
	// ChannelLog returns part id's log of whole messages, in the order
	// they were sent or arrived.
	ChannelLog(ctx context.Context, id apiv1.RunID) ([]apiv1.ChannelMessage, error)
	// DropEndedChannels drops every piece that parts which ended keep:
	// no share of theirs will take another message. The logs stay. It
	// returns how many pieces it dropped.
	DropEndedChannels(ctx context.Context) (int64, error)
}

// ChannelKey names one message at one end of the channel: the federated
// task and attempt it belongs to, this party's role, the other party and
// its role, and the message's name.
type ChannelKey struct {
	Task     string
	Attempt  int
	Role     string
	Party    string
	PeerRole string
	Name     string
}

// ChannelChunk is one piece of a received message: piece Index of
// Chunks, of a message of Size bytes whose SHA-256 is Digest.
type ChannelChunk struct {
	Key    ChannelKey
	Index  int
	Chunks int
	Size   int64
	Digest string
	Data   []byte
	At     time.Time
}
