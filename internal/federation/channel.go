package federation

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// ShareAt names one attempt of one share of a party's part, as a
// channel token does.
type ShareAt struct {
	Part    apiv1.RunID
	Share   string
	Attempt int
}

// Piece is one piece of a federation channel message, as the sending
// party's server forwards it to the receiving party's: piece Index of
// Pieces of a message of Size bytes whose SHA-256 is Digest
// ("sha256:<hex>").
type Piece struct {
	Index, Pieces int
	Size          int64
	Digest        string
	Data          []byte
}

// MessageTo names a message of the channel from the sender's side: the
// federated run and task (its name in the whole workflow) and attempt,
// the sending share's role, the receiving share's role, and the name.
type MessageTo struct {
	Run      apiv1.RunID
	Task     string
	Attempt  int
	FromRole string
	ToRole   string
	Name     string
}

// Delivered is the receiving party's answer to a piece: whether it now
// holds the whole message.
type Delivered struct {
	Whole bool `json:"whole"`
}

// SendPiece hands the party piece p of message m, for its share of m's
// task as m.ToRole. Sent again, it changes nothing.
func (c *Client) SendPiece(ctx context.Context, m MessageTo, p Piece) (Delivered, error) {
	path := partPath(m.Run) + "/channel/" + strings.Join([]string{
		url.PathEscape(m.Task), strconv.Itoa(m.Attempt), url.PathEscape(m.FromRole), url.PathEscape(m.ToRole), url.PathEscape(m.Name),
	}, "/")
	q := url.Values{"piece": {strconv.Itoa(p.Index)}, "pieces": {strconv.Itoa(p.Pieces)}, "size": {strconv.FormatInt(p.Size, 10)}, "digest": {p.Digest}}
	var out Delivered
	resp, err := c.send(ctx, http.MethodPut, path+"?"+q.Encode(), "application/octet-stream", bytes.NewReader(p.Data))
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return out, decodeErrors(resp)
	}
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

// NoChannelLog refuses to list the channel log of a run that is no
// party's part (KLN-4006): a federated run's log is at each party, under
// its part. self is the party asked, if it has a party identity.
func NoChannelLog(run *apiv1.Run, self string) error {
	f := run.Federation
	if f != nil && f.Part {
		return nil
	}
	e := &apiv1.Error{
		Code: apiv1.CodeBadRequest, Object: "Run/" + string(run.ID),
		Message: "run " + string(run.ID) + " is no party's part of a federated run: it has no channel log",
	}
	if f != nil {
		if self == "" {
			self = "P"
		}
		e.Hint = "each party logs its own end of the channel, under its part: here, kiln messages " + string(apiv1.PartID(run.ID, self))
	}
	return e
}

// Outputs hands out the outputs of a party's shares that cross parties:
// a parameter's value, an artifact's bytes.
type Outputs interface {
	PartOutput(ctx context.Context, run apiv1.RunID, task, param string) (string, error)
	PartArtifact(ctx context.Context, run apiv1.RunID, task, name string) ([]byte, error)
}
