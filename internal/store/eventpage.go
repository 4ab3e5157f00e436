package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// EventPage is the events of run id that q asks for: every event after
// q.After; the last q.Tail; or a page of q.Limit, oldest first, with the
// continue token of the next. A tail or a page counts the events there
// are in all (Total), so that a reader can say how many it left out. A
// continue token that r did not give is KLN-4076.
func EventPage(ctx context.Context, r Runs, id apiv1.RunID, q apiv1.EventQuery) (*apiv1.EventList, error) {
	if q.Tail == 0 && q.Limit == 0 && q.Continue == "" {
		list, err := r.ListEvents(ctx, ListEventsParams{Run: id, After: q.After})
		return &apiv1.EventList{Items: nonNil(list)}, err
	}
	total, err := r.CountEvents(ctx, id, q.After)
	if err != nil {
		return nil, err
	}
	if q.Tail > 0 {
		list, err := r.ListEvents(ctx, ListEventsParams{Run: id, After: q.After, Tail: q.Tail})
		return &apiv1.EventList{Items: nonNil(list), Total: total}, err
	}
	from, err := eventContinue(q)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = apiv1.MaxEventPage
	}
	list, err := r.ListEvents(ctx, ListEventsParams{Run: id, After: from, Limit: limit + 1})
	if err != nil {
		return nil, err
	}
	page := &apiv1.EventList{Items: nonNil(list), Total: total}
	if len(list) > limit {
		page.Items = list[:limit]
		page.Continue = "s" + strconv.FormatInt(list[limit-1].Seq, 10)
	}
	return page, nil
}

// eventContinue is the seq after which q's page starts: its continue
// token's, else its After.
func eventContinue(q apiv1.EventQuery) (int64, error) {
	if q.Continue == "" {
		return q.After, nil
	}
	v, ok := strings.CutPrefix(q.Continue, "s")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil || n < q.After {
		return 0, &apiv1.Error{
			Code: apiv1.CodeBadContinue, Field: "continue",
			Message: fmt.Sprintf("continue %q is not one this server gave for this run's events after %d", q.Continue, q.After),
		}
	}
	return n, nil
}

func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
