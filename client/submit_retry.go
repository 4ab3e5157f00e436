package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// submitTries bounds how many times one submission is sent.
const submitTries = 5

// maxSubmitWait bounds the wait before a submission is sent again,
// whatever Retry-After says.
const maxSubmitWait = 30 * time.Second

// newKey returns a random idempotency key: 128 bits in hex.
func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// postRetrying posts body, a request that creates a run, to path with
// header (its idempotency key among them) until the server answers it,
// and returns the run it names and whether an earlier request with the
// key created it.
func (c *Client) postRetrying(ctx context.Context, path string, body []byte, header http.Header) (*apiv1.Run, bool, error) {
	for try := 1; ; try++ {
		run, replayed, wait, err := c.postOnce(ctx, path, body, header.Clone(), try)
		if err == nil || wait < 0 || try == submitTries {
			return run, replayed, err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, false, ctx.Err()
		case <-timer.C:
		}
	}
}

// postOnce posts a request that creates a run once. When it may be
// sent again, wait says after how long; otherwise wait is negative.
func (c *Client) postOnce(ctx context.Context, path string, body []byte, header http.Header, try int) (_ *apiv1.Run, replayed bool, wait time.Duration, _ error) {
	resp, err := c.roundTrip(ctx, "POST", path, body, header)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, -1, err
		}
		return nil, false, min(time.Duration(try)*time.Second, maxSubmitWait), err // no answer: it may have been taken
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		wait = -1
		if resp.StatusCode == http.StatusServiceUnavailable {
			wait = retryAfter(resp.Header.Get("Retry-After"))
		}
		return nil, false, wait, responseError("POST", path, resp)
	}
	var run apiv1.Run
	return &run, resp.Header.Get("Idempotency-Replayed") == "true", -1, json.NewDecoder(resp.Body).Decode(&run)
}

// retryAfter is a Retry-After header's seconds, 1s if it has none,
// at most maxSubmitWait.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return time.Second
	}
	return min(time.Duration(n)*time.Second, maxSubmitWait)
}
