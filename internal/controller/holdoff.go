package controller

import (
	"time"

	"k8s.io/client-go/util/workqueue"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// holdoff keeps a run whose round failed (its store cannot be written,
// say) from going round again before its backoff is over, however often
// it is woken meanwhile: a failed round gives its room back, and the room
// given back would otherwise wake the run at once, for ever.
type holdoff struct {
	delay workqueue.TypedRateLimiter[apiv1.RunID]
	until map[apiv1.RunID]time.Time // guarded by Controller.mu
}

func newHoldoff() holdoff {
	return holdoff{
		delay: workqueue.NewTypedItemExponentialFailureRateLimiter[apiv1.RunID](5*time.Millisecond, 30*time.Second),
		until: map[apiv1.RunID]time.Time{},
	}
}

// failed holds run id off for its next backoff and returns it.
func (c *Controller) failed(id apiv1.RunID) time.Duration {
	d := c.hold.delay.When(id)
	c.mu.Lock()
	c.hold.until[id] = time.Now().Add(d)
	c.mu.Unlock()
	return d
}

// succeeded ends run id's backoff.
func (c *Controller) succeeded(id apiv1.RunID) {
	c.queue.Forget(id)
	c.hold.delay.Forget(id)
	c.mu.Lock()
	delete(c.hold.until, id)
	c.mu.Unlock()
}

// heldOff returns how long run id must still wait, or 0.
func (c *Controller) heldOff(id apiv1.RunID) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.hold.until[id]
	if !ok {
		return 0
	}
	return max(time.Until(until), 0)
}
