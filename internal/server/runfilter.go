package server

import (
	"net/http"
	"net/url"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// runFilters reads the filters GET /api/v1/runs takes into p: phase
// (several, comma separated, in any case), since and until (RFC 3339, or
// a duration before now), q (a search of IDs and workflow names) and
// order (asc or desc) and label (a selector in kubectl's syntax). A bad value is a 400 with a coded error naming it.
// A watch of the list reads the same filters.
func runFilters(q url.Values, p *store.ListRunsParams, now time.Time) error {
	phases, err := apiv1.ParsePhases(q.Get("phase"))
	if err != nil {
		return &httpError{status: http.StatusBadRequest, err: apiv1.Errors(err)[0]}
	}
	p.Phases = phases
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &p.Since}, {"until", &p.Until}} {
		v := q.Get(t.name)
		if v == "" {
			continue
		}
		if *t.dst, err = apiv1.ParseTimeAgo(t.name, v, now); err != nil {
			return &httpError{status: http.StatusBadRequest, err: apiv1.Errors(err)[0]}
		}
	}
	if _, err := store.ParseSelector(q.Get("label")); err != nil {
		return &httpError{status: http.StatusBadRequest, err: apiv1.Errors(err)[0]}
	}
	p.Label = q.Get("label")
	p.Search = q.Get("q")
	switch order := q.Get("order"); order {
	case "", "desc":
	case "asc":
		p.Ascending = true
	default:
		return badRequest("order %q is neither asc nor desc", order)
	}
	return nil
}
