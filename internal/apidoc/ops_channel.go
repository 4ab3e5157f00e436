package apidoc

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Parameters of the channel's routes.
var (
	channelPart    = Param{Name: "part", In: "path", Type: "", Description: "the party's part (the run R-<party>)"}
	channelShare   = Param{Name: "share", In: "path", Type: "", Description: "the share: a task of the part"}
	channelAttempt = Param{Name: "attempt", In: "path", Type: 0, Description: "the attempt the token was given to"}
	channelParty   = Param{Name: "party", In: "path", Type: "", Description: "the other end: a party of KILN_FEDERATION_PEERS"}
	channelRole    = Param{Name: "role", In: "path", Type: "", Description: "the other end's role"}
	messageName    = Param{Name: "name", In: "path", Type: "", Description: "the message's name: 1 to 128 letters, digits, '.', '_' or '-'; one message per name, sender and receiver in an attempt"}
	pieceIndex     = Param{Name: "piece", In: "query", Type: 0, Description: "which piece, from 0", Default: 0}
	piecesParam    = Param{Name: "pieces", In: "query", Type: 0, Description: "how many pieces carry the message: its size over 524288, rounded up (1 for an empty one)", Required: true}
	sizeParam      = Param{Name: "size", In: "query", Type: 0, Description: "the whole message's size in bytes, at most 1 GiB", Required: true}
	digestParam    = Param{Name: "digest", In: "query", Type: "", Description: "sha256:<hex> of the whole message", Required: true}
)

// pieceBody is a piece of a message: 524288 bytes, fewer for the last.
var pieceBody = &Body{Description: "the piece's bytes: 524288 of them, or what is left for the last piece", Content: map[string]*openapi3.SchemaRef{"application/octet-stream": openapi3.NewSchemaRef("", openapi3.NewStringSchema().WithFormat("binary"))}}

// channelOperations are the routes of the federation channel.
func channelOperations() []Operation {
	share := "/api/v1/channel/{part}/{share}/{attempt}"
	at := []Param{channelPart, channelShare, channelAttempt, channelParty, channelRole, messageName}
	return []Operation{
		{
			Method: "PUT", Path: share + "/out/{party}/{role}/{name}", ID: "sendMessagePiece", Tag: "channel", Role: Channel,
			Summary:     "send a piece of a message to another party's share",
			Description: "Send one piece of a message to a share of another party of the same attempt; this server forwards it to that party's server at once. Idempotent: a piece sent again changes nothing, so a cut transfer resumes at its piece. 502 (KLN-7004) when the party's server is not reached: send the piece again. The answer says whether the receiving party now holds the whole message; the message is then logged sent (GET /api/v1/runs/{id}/messages).",
			Params:      append(at, pieceIndex, piecesParam, sizeParam, digestParam),
			Body:        pieceBody,
			Answers:     []Answer{{Status: http.StatusOK, Description: "the piece is held by the receiving party", Type: deliveredDoc{}}},
			Errors:      []int{http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusBadGateway},
		},
		{
			Method: "GET", Path: share + "/in/{party}/{role}/{name}", ID: "receiveMessagePiece", Tag: "channel", Role: Channel,
			Summary:     "receive a piece of a message from another party's share",
			Description: "One piece of a message another party's share sent this one, once all of it arrived; waits up to wait seconds (at most 20) for it, and answers 204 if it has not arrived by then. The answer's Kiln-Pieces, Kiln-Size and Kiln-Digest headers describe the whole message: check the digest of the pieces put together.",
			Params:      append(at, pieceIndex, Param{Name: "wait", In: "query", Type: 0, Description: "seconds to wait for the message, at most 20", Default: 0}),
			Answers: []Answer{
				{Status: http.StatusOK, Description: "the piece", Stream: "application/octet-stream", StreamDescription: "the piece's bytes"},
				{Status: http.StatusNoContent, Description: "the message has not arrived whole yet: ask again"},
			},
		},
		{
			Method: "DELETE", Path: share + "/in/{party}/{role}/{name}", ID: "takeMessage", Tag: "channel", Role: Channel,
			Summary:     "mark a received message taken",
			Description: "Mark a whole received message taken: the server drops its bytes and logs when it was taken. Idempotent.",
			Params:      at,
			Answers:     []Answer{{Status: http.StatusNoContent, Description: "taken"}},
		},
		{
			Method: "PUT", Path: "/api/v1/federation/parts/{run}/channel/{task}/{attempt}/{from}/{to}/{name}", ID: "deliverMessagePiece", Tag: "federation", Role: Party,
			Summary:     "hand this party a piece of a message for one of its shares",
			Description: "A piece of a message that a share of the calling party sends, as role from, to this party's share of the task, as role to; kept until that share takes the message or the part ends. 404 (KLN-4001) unless the caller fills role from in the run.",
			Params: []Param{
				partRun,
				{Name: "task", In: "path", Type: "", Description: "the federated task, by its name in the whole workflow"},
				channelAttempt,
				{Name: "from", In: "path", Type: "", Description: "the sending share's role"},
				{Name: "to", In: "path", Type: "", Description: "the receiving share's role"},
				messageName, pieceIndex, piecesParam, sizeParam, digestParam, kilnParty,
			},
			Body:    pieceBody,
			Answers: []Answer{{Status: http.StatusOK, Description: "the piece is held", Type: deliveredDoc{}}},
			Errors:  []int{http.StatusConflict, http.StatusRequestEntityTooLarge},
		},
		{
			Method: "GET", Path: "/api/v1/runs/{id}/messages", ID: "listRunMessages", Tag: "runs", Role: Viewer,
			Summary:     "the federation channel's log of a party's part",
			Description: "Every message the part's shares sent (once the receiving party held all of it) and received (once all of it arrived), with its size, digest and when; the bytes are never listed.",
			Params:      []Param{runID},
			Answers:     []Answer{{Status: http.StatusOK, Description: "the log", Type: apiv1.ChannelLog{}}},
		},
	}
}

// deliveredDoc is federation.Delivered, as the document shows it.
type deliveredDoc struct {
	// Whole is set once the receiving party holds every piece.
	Whole bool `json:"whole"`
}
