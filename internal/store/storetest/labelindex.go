package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// labelRuns creates 40 runs with labels of a few shapes, some created
// at the same instant (the list orders those by ID), some finished, and
// returns the runs newest first, as the list orders them.
func labelRuns(t *testing.T, s store.Store) []*apiv1.Run {
	t.Helper()
	for i := range 40 {
		p := NewRun(apiv1.RunID(fmt.Sprintf("r%02d", i)), "me")
		p.Run.CreatedAt = t0.Add(time.Duration(i/3) * time.Second) // three runs a second
		p.Run.Name = []string{"train", "eval"}[i%2]
		p.Run.Labels = map[string]string{"team": []string{"vision", "nlp", "audio"}[i%3]}
		if i%4 == 0 {
			p.Run.Labels["gpu"] = []string{"a100", "h100"}[i%8/4]
		}
		if i%5 == 0 {
			p.Run.Labels["draft"] = ""
		}
		if i%7 == 0 {
			p.Run.Labels = nil // a run without labels
		}
		mustCreate(t, s, p)
		if i%3 == 1 {
			finish(t, s, p.Run.ID, apiv1.PhaseFailed)
		}
	}
	all, err := s.ListRuns(t.Context(), store.ListRunsParams{Limit: 1000})
	if err != nil || len(all) != 40 {
		t.Fatalf("listing every run: %d runs, %v", len(all), err)
	}
	return all
}

// testLabelIndex checks that every selector form keeps the runs it kept
// when selectors tested the labels of each run, in the list's order, page
// by page through the cursor, either way, with the other filters.
func testLabelIndex(t *testing.T, s store.Store) {
	all := labelRuns(t, s)
	for _, sel := range []string{
		"team=vision", "team==nlp", "team!=vision", "team in (nlp)", "team in (audio,vision)", "team notin (audio,vision)",
		"gpu", "!gpu", "draft", "!draft", "draft=", "team=vision,gpu", "team in (nlp,audio),!draft", "gpu in (a100,h100),team!=nlp",
		"", "!gpu,team!=audio", "team=nobody", "nokey", "gpu=a100,gpu=h100", "team in (vision,nlp,audio,x),gpu notin (h100)",
	} {
		parsed, err := labels.Parse(sel)
		if err != nil {
			t.Fatalf("%q: %v", sel, err)
		}
		for _, f := range []struct {
			name string
			p    store.ListRunsParams
			keep func(*apiv1.Run) bool
		}{
			{"alone", store.ListRunsParams{}, func(*apiv1.Run) bool { return true }},
			{"failed", store.ListRunsParams{Phase: apiv1.PhaseFailed}, func(r *apiv1.Run) bool { return r.Status.Phase == apiv1.PhaseFailed }},
			{"two phases", store.ListRunsParams{Phases: []apiv1.Phase{apiv1.PhasePending, apiv1.PhaseFailed}, Phase: apiv1.PhaseFailed}, func(r *apiv1.Run) bool {
				return r.Status.Phase == apiv1.PhaseFailed || r.Status.Phase == apiv1.PhasePending
			}},
			{"search", store.ListRunsParams{Search: "EVA"}, func(r *apiv1.Run) bool { return r.Name == "eval" }},
			{"window", store.ListRunsParams{Since: t0.Add(3 * time.Second), Until: t0.Add(9 * time.Second)}, func(r *apiv1.Run) bool {
				return !r.CreatedAt.Before(t0.Add(3*time.Second)) && r.CreatedAt.Before(t0.Add(9*time.Second))
			}},
		} {
			var want []apiv1.RunID
			for _, r := range all {
				if f.keep(r) && parsed.Matches(labels.Set(r.Labels)) {
					want = append(want, r.ID)
				}
			}
			for _, asc := range []bool{false, true} {
				p := f.p
				p.Label, p.Ascending = sel, asc
				got := pages(t, s, p, 4)
				w := want
				if asc {
					w = reversed(want)
				}
				if diff := cmp.Diff(w, got); diff != "" {
					t.Errorf("%q %s ascending=%v, in pages of 4 (-want +got):\n%s", sel, f.name, asc, diff)
				}
			}
		}
	}
}

// pages lists every run p selects, limit at a time, each page after the
// last run of the one before.
func pages(t *testing.T, s store.Store, p store.ListRunsParams, limit int) []apiv1.RunID {
	t.Helper()
	var out []apiv1.RunID
	p.Limit = limit
	for range 100 {
		page, err := s.ListRuns(t.Context(), p)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if len(page) > limit {
			t.Fatalf("%+v: a page of %d runs, over the limit", p, len(page))
		}
		out = append(out, ids(page)...)
		if len(page) < limit {
			return out
		}
		last := page[len(page)-1]
		p.After = &store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	t.Fatalf("%+v: more than 100 pages", p)
	return nil
}

func reversed[T any](s []T) []T {
	var out []T
	for i := len(s) - 1; i >= 0; i-- {
		out = append(out, s[i])
	}
	return out
}

// testCountsAfterWorkload checks the runs' counts by phase, kept as runs
// change, against a count of every run listed, after a mixed workload:
// submit, start, finish, fail, retry, delete and expire (the collector's
// deletion).
func testCountsAfterWorkload(t *testing.T, s store.Store) {
	ctx := t.Context()
	ttl := int32(0)
	for i := range 30 {
		p := NewRun(apiv1.RunID(fmt.Sprintf("w%02d", i)), "me")
		p.Run.CreatedAt = t0.Add(time.Duration(i) * time.Second)
		if i%6 == 0 {
			p.Run.Workflow.Spec.TTLSecondsAfterFinished = &ttl
		}
		mustCreate(t, s, p)
		check(t, s, "after a submission")
	}
	for i := range 30 {
		id := apiv1.RunID(fmt.Sprintf("w%02d", i))
		switch i % 5 {
		case 0:
			finish(t, s, id, apiv1.PhaseSucceeded)
		case 1:
			finish(t, s, id, apiv1.PhaseFailed)
		case 2:
			apply(t, s, &store.Change{Run: id, Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning, StartedAt: &t0}})
			apply(t, s, &store.Change{Run: id, Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning, StartedAt: &t0, Message: "again"}})
		case 3:
			finish(t, s, id, apiv1.PhaseCancelled)
		}
	}
	check(t, s, "after the runs ended")
	for _, id := range []apiv1.RunID{"w01", "w06", "w03"} {
		if err := s.RetryRun(ctx, id, store.Retry{Owner: "me", Until: t0.Add(time.Hour)}); err != nil {
			t.Fatalf("retry %s: %v", id, err)
		}
	}
	finish(t, s, "w06", apiv1.PhaseSucceeded)
	check(t, s, "after retries")
	for _, id := range []apiv1.RunID{"w05", "w11", "w13", "w08"} {
		if err := s.DeleteRun(ctx, id); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	if err := s.DeleteRun(ctx, "w02"); err == nil {
		t.Fatal("deleting a running run: no error")
	}
	check(t, s, "after deletions")
	expired, err := s.ExpiredRuns(ctx, t0.Add(time.Hour))
	if err != nil || len(expired) == 0 {
		t.Fatalf("expired runs: %v, %v; want some", expired, err)
	}
	for _, r := range expired {
		if err := s.DeleteRun(ctx, r.ID); err != nil {
			t.Fatalf("collect %s: %v", r.ID, err)
		}
	}
	check(t, s, "after the expired runs were collected")
}

// check compares CountRuns with a count of every run the list holds.
func check(t *testing.T, s store.Store, when string) {
	t.Helper()
	want := map[apiv1.Phase]int{}
	all, err := s.ListRuns(t.Context(), store.ListRunsParams{Limit: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		want[r.Status.Phase]++
	}
	got, err := s.CountRuns(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts %s (-scan +kept):\n%s", when, diff)
	}
}
