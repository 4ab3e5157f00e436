package server

import (
	"fmt"
	"net/http"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// listEvents answers run id's events after after: all of them; with
// ?tail=N the last N; with ?limit=N a page of N, oldest first, and the
// continue token of the next. A tail or a page says how many events
// there are in all (total), so that a client can say how many it left
// out.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, id apiv1.RunID, after int64) error {
	q, err := eventQuery(r, after)
	if err != nil {
		return err
	}
	list, err := store.EventPage(r.Context(), s.cfg.Store, id, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// eventsHint says what tail and limit of a run's events take.
var eventsHint = fmt.Sprintf("give one of tail=N (the last N events) or limit=N (a page of N from the oldest, then continue), "+
	"N from 1 to %d; 0 or neither: every event", apiv1.MaxEventPage)

// eventQuery reads the paging parameters of a request for events.
func eventQuery(r *http.Request, after int64) (apiv1.EventQuery, error) {
	q := apiv1.EventQuery{After: after, Continue: r.URL.Query().Get("continue")}
	for _, p := range []struct {
		name string
		to   *int
	}{{"limit", &q.Limit}, {"tail", &q.Tail}} {
		n, err := intParam(r, p.name, 0)
		if err != nil || n > apiv1.MaxEventPage {
			return q, badParam(p.name, eventsHint, "%s %q is not a number from 0 to %d", p.name, r.URL.Query().Get(p.name), apiv1.MaxEventPage)
		}
		*p.to = n
	}
	if q.Tail > 0 && q.Limit > 0 {
		return q, badParam("tail", eventsHint, "tail and limit do not go together: tail=%d asks for the last events, limit=%d for a page from the first", q.Tail, q.Limit)
	}
	return q, nil
}
