package controller

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// holdoff keeps a run whose round failed (its store cannot be written,
// say) from going round again before its backoff is over, however often
// it is woken meanwhile: a failed round gives its room back, and the room
// given back would otherwise wake the run at once, for ever. It is safe
// for concurrent use.
type holdoff struct {
	delay workqueue.TypedRateLimiter[apiv1.RunID]
	mu    sync.Mutex
	until map[apiv1.RunID]time.Time
}

func newHoldoff() *holdoff {
	return &holdoff{
		delay: workqueue.NewTypedItemExponentialFailureRateLimiter[apiv1.RunID](5*time.Millisecond, 30*time.Second),
		until: map[apiv1.RunID]time.Time{},
	}
}

// failed holds run id off for its next backoff and returns it.
func (h *holdoff) failed(id apiv1.RunID) time.Duration {
	d := h.delay.When(id)
	h.mu.Lock()
	h.until[id] = time.Now().Add(d)
	h.mu.Unlock()
	return d
}

// succeeded ends run id's backoff; forget drops it with the run.
func (h *holdoff) succeeded(id apiv1.RunID) {
	h.delay.Forget(id)
	h.mu.Lock()
	delete(h.until, id)
	h.mu.Unlock()
}

// heldOff returns how long run id must still wait, or 0.
func (h *holdoff) heldOff(id apiv1.RunID) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	until, ok := h.until[id]
	if !ok {
		return 0
	}
	return max(time.Until(until), 0)
}
