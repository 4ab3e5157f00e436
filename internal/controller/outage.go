package controller

import (
	"errors"
	"fmt"
	"strings"
	"sync"
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

// outages are the outages of the engine's runs not yet recorded. They
// are safe for concurrent use.
type outages struct {
	mu    sync.Mutex
	byRun map[apiv1.RunID]*outage
}

func newOutages() *outages { return &outages{byRun: map[apiv1.RunID]*outage{}} }

// unsaved notes that run id's round could not be written for err, if err
// is the store's (a KLN-5xxx code).
func (u *outages) unsaved(id apiv1.RunID, err error) {
	var coded *apiv1.Error
	if !errors.As(err, &coded) || !strings.HasPrefix(string(coded.Code), "KLN-5") {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	o, ok := u.byRun[id]
	if !ok {
		o = &outage{since: time.Now().UTC(), code: coded.Code, err: coded.Text()}
		u.byRun[id] = o
	}
	o.rounds++
}

// event is the event that records run id's outage, if it had one
// not yet recorded.
func (u *outages) event(id apiv1.RunID, phase apiv1.Phase, now time.Time) (apiv1.Event, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	o, ok := u.byRun[id]
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

// recorded forgets run id's outage once its event is written.
func (u *outages) recorded(id apiv1.RunID) {
	u.mu.Lock()
	delete(u.byRun, id)
	u.mu.Unlock()
}
