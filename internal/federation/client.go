// Package federation is how kiln servers of different parties work on
// one federated run: the HTTP client of the party-to-party API
// (/api/v1/federation) and the initiator's coordination of each party's
// part.
package federation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Timeout bounds one call to a party, unless the caller's context ends
// it sooner: a party that does not answer is retried, never waited on.
const Timeout = 30 * time.Second

// Client calls one party's server as this server's party, with the
// credential the party issued to it. Every call is idempotent, so a
// caller may repeat one whose answer it did not get.
type Client struct {
	base       string
	self       string
	credential string
	http       *http.Client
}

// New returns a client of the party server at server ("http://10.0.0.2:8420")
// for the party self, presenting credential. pin, if set ("sha256:<hex>"
// of the certificate's DER bytes), is the certificate an https server
// must present, whoever signed it; without it, the system's roots decide.
func New(server, self, credential, pin string) *Client {
	c := &http.Client{Timeout: Timeout}
	if pin != "" {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = pinned(pin)
		c.Transport = t
	}
	return &Client{base: strings.TrimRight(server, "/"), self: self, credential: credential, http: c}
}

// pinned accepts exactly the certificate whose pin is pin: the party's
// own, as kiln serve --tls-cert printed it, signed by anyone.
func pinned(pin string) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // the pin below is the check: exactly one certificate is accepted
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("the server presented no certificate")
			}
			sum := sha256.Sum256(raw[0])
			if got := "sha256:" + hex.EncodeToString(sum[:]); got != pin {
				return fmt.Errorf("the server's certificate is %s, not the one pinned for the party (%s)", got, pin)
			}
			return nil
		},
	}
}

// CreatePart asks the party to create its part of run req.Run; sent
// again, it answers the part as it stands.
func (c *Client) CreatePart(ctx context.Context, req apiv1.PartRequest) (apiv1.PartStatus, error) {
	var out apiv1.PartStatus
	_, err := c.call(ctx, http.MethodPut, partPath(req.Run), req, &out)
	return out, err
}

// CheckPart asks the party whether it would create its part of
// req's run, and keeps nothing.
func (c *Client) CheckPart(ctx context.Context, req apiv1.PartRequest) error {
	_, err := c.call(ctx, http.MethodPost, "/api/v1/federation/check", req, nil)
	return err
}

// PartOutput asks the party for output param of its share of task in
// federated run id, which the workflow sends to this party.
func (c *Client) PartOutput(ctx context.Context, id apiv1.RunID, task, param string) (string, error) {
	var out apiv1.PartOutput
	_, err := c.call(ctx, http.MethodGet, partPath(id)+"/outputs/"+url.PathEscape(task)+"/"+url.PathEscape(param), nil, &out)
	return out.Value, err
}

// PartArtifact asks the party for the bytes of artifact name of its
// share of task in federated run id, which the workflow sends here.
func (c *Client) PartArtifact(ctx context.Context, id apiv1.RunID, task, name string) ([]byte, error) {
	resp, err := c.send(ctx, http.MethodGet, partPath(id)+"/outputs/"+url.PathEscape(task)+"/artifacts/"+url.PathEscape(name), "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return nil, decodeErrors(resp)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if want := resp.Header.Get("Kiln-Digest"); want != "sha256:"+hex.EncodeToString(sum[:]) {
		return nil, fmt.Errorf("artifact %s of task %s arrived cut or changed: its digest is not %s", name, task, want)
	}
	return data, nil
}

// PartStatus returns the party's part of federated run id as it stands.
func (c *Client) PartStatus(ctx context.Context, id apiv1.RunID) (apiv1.PartStatus, error) {
	var out apiv1.PartStatus
	_, err := c.call(ctx, http.MethodGet, partPath(id), nil, &out)
	return out, err
}

// OrderShare sends the party what the initiator wants of its share of
// task in run id, and returns the share as it stands.
func (c *Client) OrderShare(ctx context.Context, id apiv1.RunID, task string, o apiv1.ShareOrder) (apiv1.ShareStatus, error) {
	var out apiv1.ShareStatus
	_, err := c.call(ctx, http.MethodPut, partPath(id)+"/shares/"+url.PathEscape(task), o, &out)
	return out, err
}

// StopPart cancels, ends, suspends or resumes (how) the party's part of
// run id.
func (c *Client) StopPart(ctx context.Context, id apiv1.RunID, how string) error {
	switch how {
	case StopCancel, StopEnd, StopFail, "suspend", "resume":
	default:
		return apiv1.Errorf(apiv1.CodeBadRequest, fmt.Sprintf("a part is stopped with cancel, end, fail, suspend or resume, not %q", how))
	}
	_, err := c.call(ctx, http.MethodPost, partPath(id)+"/"+how, nil, nil)
	return err
}

// Hello asks the party's server who it is. It returns the name the
// server answers with (its Kiln-Party header) even when it refuses the
// credential, and "" when it has no party identity or was not reached.
func (c *Client) Hello(ctx context.Context) (string, error) {
	var out apiv1.PartyHello
	h, err := c.call(ctx, http.MethodGet, "/api/v1/federation/party", nil, &out)
	return h.Get(apiv1.PartyHeader), err
}

func partPath(id apiv1.RunID) string {
	return "/api/v1/federation/parts/" + url.PathEscape(string(id))
}

// call sends in (nil: no body) and decodes the answer into out (nil: none
// expected). It returns the answer's headers, the server's errors as
// their *apiv1.Error values, and network errors as they are.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	contentType := ""
	if in != nil {
		contentType = "application/json"
	}
	resp, err := c.send(ctx, method, path, contentType, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return resp.Header, decodeErrors(resp)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return resp.Header, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.Header, fmt.Errorf("%s %s%s: reading the answer: %w", method, c.base, path, err)
	}
	return resp.Header, nil
}

// send sends a request to path as this server's party, with body (nil:
// none) of contentType; the caller closes the answer's body.
func (c *Client) send(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Authorization", "Bearer "+c.credential)
	req.Header.Set(apiv1.PartyHeader, c.self)
	return c.http.Do(req)
}

// decodeErrors returns the coded errors of an error answer, joined, or an
// error with its status when it carries none (a proxy's page).
func decodeErrors(resp *http.Response) error {
	var e struct{ Errors []*apiv1.Error }
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&e) != nil || len(e.Errors) == 0 {
		return fmt.Errorf("%s %s: %s", resp.Request.Method, resp.Request.URL, resp.Status)
	}
	errs := make([]error, len(e.Errors))
	for i, x := range e.Errors {
		errs[i] = x
	}
	return errors.Join(errs...)
}
