package server

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// limiters keeps a token bucket per key (a token's ID, a client's
// address). A bucket left alone long enough to have filled up again is
// forgotten, since a new one is the same: memory grows with the keys
// seen in that time, not with every key ever seen. A nil *limiters
// limits nothing.
type limiters struct {
	rate  rate.Limit
	burst int
	idle  time.Duration    // how long an unused bucket takes to fill up
	now   func() time.Time // time.Now; tests move it

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

// newLimiters returns buckets of burst requests refilled at perSecond, or
// nil, which limits nothing, for a negative rate.
func newLimiters(perSecond float64, burst int) *limiters {
	if perSecond < 0 {
		return nil
	}
	burst = max(burst, 1)
	return &limiters{
		rate: rate.Limit(perSecond), burst: burst, now: time.Now,
		idle:    max(time.Minute, time.Duration(float64(burst)/perSecond*float64(time.Second))),
		buckets: map[string]*bucket{},
	}
}

// take takes one request from key's bucket. When it is empty it takes
// nothing and returns a 429 that says when the next request would be let
// through.
func (l *limiters) take(key string) error {
	if l == nil {
		return nil
	}
	now := l.now()
	b := l.bucket(key, now)
	r := b.lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	if wait == 0 {
		return nil
	}
	r.CancelAt(now)
	return &httpError{
		status: http.StatusTooManyRequests, retryAfter: max(wait, time.Second),
		err: apiv1.Errorf(apiv1.CodeRateLimited, fmt.Sprintf("more than %d requests at once or %g a second on average", l.burst, float64(l.rate))),
	}
}

// bucket returns key's bucket, made on first use, and forgets those
// unused for l.idle, at most once per l.idle.
func (l *limiters) bucket(key string, now time.Time) *bucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= l.idle {
		l.swept = now
		for k, b := range l.buckets {
			if now.Sub(b.used) >= l.idle {
				delete(l.buckets, k)
			}
		}
	}
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.rate, l.burst)}
		l.buckets[key] = b
	}
	b.used = now
	return b
}

// size is how many buckets are kept.
func (l *limiters) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
