package controller

import (
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// outage is a time a run's rounds could not be written because the store
// could not be (its disk full, its file damaged): what happened then is
// recorded as the engine found it afterwards, and the run's events say so.
type outage struct {
	since  time.Time
	rounds int
	code   apiv1.Code
	err    string
}

// unsaved notes that run id's round could not be written for err, if err
// is the store's (a KLN-5xxx code).
func (c *Controller) unsaved(id apiv1.RunID, err error) {
	var coded *apiv1.Error
	if !errors.As(err, &coded) || !strings.HasPrefix(string(coded.Code), "KLN-5") {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.outages[id]
	if !ok {
		o = &outage{since: time.Now().UTC(), code: coded.Code, err: coded.Text()}
		c.outages[id] = o
	}
	o.rounds++
}

// outageEvent is the event that records run id's outage, if it had one
// not yet recorded.
func (c *Controller) outageEvent(id apiv1.RunID, phase apiv1.Phase, now time.Time) (apiv1.Event, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.outages[id]
	if !ok {
		return apiv1.Event{}, false
	}
	return apiv1.Event{
		Phase: phase, Reason: "StoreUnavailable", Code: o.code,
		Message: fmt.Sprintf("the store could not be written from %s for %s (%d rounds): %s; what happened meanwhile is recorded as the engine found it afterwards",
			o.since.Format(time.RFC3339), now.Sub(o.since).Round(time.Second), o.rounds, o.err),
		Time: now,
	}, true
}

// outageRecorded forgets run id's outage once its event is written.
func (c *Controller) outageRecorded(id apiv1.RunID) {
	c.mu.Lock()
	delete(c.outages, id)
	c.mu.Unlock()
}
