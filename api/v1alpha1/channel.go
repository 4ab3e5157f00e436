package v1alpha1

import "time"

// ChannelMessage is one message of the federation channel, as a party's
// part of a federated run logs it: sent by one of its shares to a share
// of another party, or received from one. The message's bytes are kept
// until the receiving share takes it or the part ends; the log is kept
// with the run.
type ChannelMessage struct {
	// Direction is "sent" or "received".
	Direction string `json:"direction"`
	// Task is the federated task (its name in the whole workflow) and
	// Attempt its attempt: a message belongs to one attempt.
	Task    string `json:"task"`
	Attempt int    `json:"attempt"`
	// Role is the role of this party's share; Party and PeerRole are the
	// other end: where it went, or where it came from.
	Role     string `json:"role"`
	Party    string `json:"party"`
	PeerRole string `json:"peerRole"`
	// Name is the message's name, chosen by the sending program.
	Name string `json:"name"`
	// Size is its length in bytes, Digest "sha256:<hex>" of them all,
	// and Chunks how many pieces carried it.
	Size   int64  `json:"size"`
	Digest string `json:"digest"`
	Chunks int    `json:"chunks"`
	// At is when it was sent (all of it forwarded), or when all of it
	// arrived; Taken is when the receiving share took it.
	At    time.Time  `json:"at"`
	Taken *time.Time `json:"taken,omitempty"`
}

// ChannelLog is the list of a part's channel messages, in the order they
// were sent or arrived.
type ChannelLog struct {
	Items []ChannelMessage `json:"items"`
}

// Channel message directions.
const (
	ChannelSent     = "sent"
	ChannelReceived = "received"
)

// ChannelChunkSize is the largest piece of a channel message one request
// carries; a longer message is sent in pieces of this size, each
// acknowledged, so a transfer cut off resumes at its piece.
const ChannelChunkSize = 512 << 10

// ChannelMaxMessage bounds one channel message (1 GiB).
const ChannelMaxMessage = 1 << 30

// ChannelTokenPrefix starts the token a share's processes present to
// their own server's federation channel (KILN_FEDERATION_TOKEN).
const ChannelTokenPrefix = "kch_"
