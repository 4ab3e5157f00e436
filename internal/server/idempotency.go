package server

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Headers of idempotent submissions: a client sends a key with a
// submission, and the same key with each retry of it; the answer to a
// submission whose key found the run an earlier one created says so.
const (
	headerIdempotencyKey = "Idempotency-Key"
	headerReplayed       = "Idempotency-Replayed"
	// maxKeyLen bounds a key: 32 hex digits is what clients send.
	maxKeyLen = 255
)

// idempotencyKey is r's Idempotency-Key, "" if it sends none; a key that
// is empty, sent twice, too long or holds other characters than letters,
// digits and - _ . : + / = is KLN-4060 naming the header.
func idempotencyKey(r *http.Request) (string, error) {
	values := r.Header.Values(headerIdempotencyKey)
	if len(values) == 0 {
		return "", nil
	}
	if len(values) > 1 || !keyShaped(values[0]) {
		return "", &httpError{status: http.StatusBadRequest, err: &apiv1.Error{
			Code: apiv1.CodeIdempotencyKey, Field: "header " + headerIdempotencyKey,
			Message: fmt.Sprintf("send one key of 1 to %d letters, digits and - _ . : + / =", maxKeyLen),
		}}
	}
	return values[0], nil
}

func keyShaped(k string) bool {
	if k == "" || len(k) > maxKeyLen {
		return false
	}
	for _, c := range []byte(k) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		switch c {
		case '-', '_', '.', ':', '+', '/', '=':
			ok = true
		}
		if !ok {
			return false
		}
	}
	return true
}

// onceSubmitter is an Engine that honours idempotency keys: SubmitOnce
// answers the run an earlier submission with the key created, and says
// so, rather than creating another (app.App is one).
type onceSubmitter interface {
	SubmitOnce(ctx context.Context, s apiv1.Submission) (run *apiv1.Run, replayed bool, err error)
}

// errSubmitLate is the refusal of a submission not checked by its
// deadline.
var errSubmitLate = &apiv1.Error{
	Code:    apiv1.CodeSubmitDeadline,
	Message: "the submission could not be checked before the server's write timeout; no run was created",
}

// late is err, as a 503 to be tried again after a second, with the same
// key, if it is KLN-4062.
func late(err error) error {
	e := apiv1.Errors(err)
	if len(e) == 0 || e[0].Code != apiv1.CodeSubmitDeadline {
		return err
	}
	return &httpError{status: http.StatusServiceUnavailable, err: e[0], retryAfter: time.Second}
}

// commitGate decides, once, between a submission's run being saved and
// its answer being given up at the deadline: whichever asks first wins.
type commitGate struct{ state atomic.Int32 } // 0 undecided, 1 saving, 2 late

// commit reports whether the run may be saved: yes unless the answer
// was given up; asked again (the save is tried again), the same.
func (g *commitGate) commit() bool {
	return g.state.CompareAndSwap(0, 1) || g.state.Load() == 1
}

// late reports whether the answer is given up: no if the run is being
// saved already.
func (g *commitGate) late() bool {
	return g.state.CompareAndSwap(0, 2)
}

// submitDeadline is when a submission that started at start must be
// checked by so that its answer is written before the write timeout cuts
// the connection: a quarter of the timeout, at most 5s, is kept for
// saving the run and writing the answer. Zero when writes are unbounded.
func (l Limits) submitDeadline(start time.Time) time.Time {
	if l.WriteTimeout <= 0 {
		return time.Time{}
	}
	return start.Add(l.WriteTimeout - min(l.WriteTimeout/4, 5*time.Second))
}
