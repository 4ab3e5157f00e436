package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// testListSearch checks the filters a person types into a runs list:
// several phases, a time window, a search in IDs and names, and the
// oldest-first order with its cursor.
func testListSearch(t *testing.T, s store.Store) {
	names := []string{"train-bert", "eval", "Train_GPT", "eval", "etl%daily"}
	for i, name := range names {
		p := NewRun(apiv1.RunID(fmt.Sprint("run-", i)), "me")
		p.Run.Name, p.Run.CreatedAt = name, t0.Add(time.Duration(i)*time.Minute)
		mustCreate(t, s, p)
	}
	finish(t, s, "run-0", apiv1.PhaseSucceeded)
	finish(t, s, "run-1", apiv1.PhaseFailed)
	finish(t, s, "run-3", apiv1.PhaseCancelled)
	for name, tc := range map[string]struct {
		p    store.ListRunsParams
		want []apiv1.RunID
	}{
		"several phases":             {store.ListRunsParams{Phases: []apiv1.Phase{apiv1.PhaseFailed, apiv1.PhaseCancelled}}, []apiv1.RunID{"run-3", "run-1"}},
		"phase and phases add up":    {store.ListRunsParams{Phase: apiv1.PhaseSucceeded, Phases: []apiv1.Phase{apiv1.PhaseFailed}}, []apiv1.RunID{"run-1", "run-0"}},
		"since is inclusive":         {store.ListRunsParams{Since: t0.Add(3 * time.Minute)}, []apiv1.RunID{"run-4", "run-3"}},
		"until is exclusive":         {store.ListRunsParams{Until: t0.Add(2 * time.Minute)}, []apiv1.RunID{"run-1", "run-0"}},
		"a window":                   {store.ListRunsParams{Since: t0.Add(time.Minute), Until: t0.Add(3 * time.Minute)}, []apiv1.RunID{"run-2", "run-1"}},
		"search names in any case":   {store.ListRunsParams{Search: "TRAIN"}, []apiv1.RunID{"run-2", "run-0"}},
		"search IDs":                 {store.ListRunsParams{Search: "un-3"}, []apiv1.RunID{"run-3"}},
		"search wildcards are plain": {store.ListRunsParams{Search: "%"}, []apiv1.RunID{"run-4"}},
		"search underscore is plain": {store.ListRunsParams{Search: "n_g"}, []apiv1.RunID{"run-2"}},
		"oldest first":               {store.ListRunsParams{Ascending: true, Limit: 3}, []apiv1.RunID{"run-0", "run-1", "run-2"}},
		"oldest first after a cursor": {
			store.ListRunsParams{Ascending: true, After: &store.Cursor{CreatedAt: t0.Add(2 * time.Minute), ID: "run-2"}},
			[]apiv1.RunID{"run-3", "run-4"},
		},
		"filters and search together": {
			store.ListRunsParams{Phases: []apiv1.Phase{apiv1.PhaseFailed, apiv1.PhaseCancelled}, Search: "eval", Since: t0.Add(2 * time.Minute)},
			[]apiv1.RunID{"run-3"},
		},
	} {
		got, err := s.ListRuns(t.Context(), tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}
