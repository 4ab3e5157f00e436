package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// slots bounds how many requests do something costly at once: a
// semaphore whose turns are waited for a short while, then refused. A
// nil channel bounds nothing.
type slots struct {
	ch   chan struct{}
	wait time.Duration
}

// newSlots returns n slots waited for up to wait; n < 0 is no bound.
func newSlots(n int, wait time.Duration) slots {
	if n < 0 {
		return slots{}
	}
	return slots{ch: make(chan struct{}, n), wait: wait}
}

// acquire takes a slot, waiting up to s.wait for one, and returns the
// function that gives it back. With none free it returns a 503 saying
// when to try again.
func (s slots) acquire(ctx context.Context) (release func(), err error) {
	if s.ch == nil {
		return func() {}, nil
	}
	select {
	case s.ch <- struct{}{}:
		return s.release, nil
	default:
	}
	timer := time.NewTimer(s.wait)
	defer timer.Stop()
	select {
	case s.ch <- struct{}{}:
		return s.release, nil
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil, &httpError{
		status: http.StatusServiceUnavailable, retryAfter: max(s.wait, time.Second),
		err: apiv1.Errorf(apiv1.CodeBusy, fmt.Sprintf("the server is checking %d submissions already", cap(s.ch))),
	}
}

func (s slots) release() { <-s.ch }

// busy is how many slots are taken.
func (s slots) busy() int { return len(s.ch) }
