package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// names lists the names of a page's nodes, space separated.
func names(p *store.NodePage) string {
	var out []string
	for _, n := range p.Nodes {
		out = append(out, n.Name)
	}
	return strings.Join(out, " ")
}

func listNodes(t *testing.T, s store.Store, p store.ListNodesParams) *store.NodePage {
	t.Helper()
	page, err := s.ListNodes(t.Context(), p)
	if err != nil {
		t.Fatalf("ListNodes(%+v): %v", p, err)
	}
	return page
}

// testNodePages pages a run's nodes by position, filtered by parent and
// phase, with their attempts and the counts of the parent's nodes.
func testNodePages(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	var items []apiv1.NodeStatus
	for i := range 7 {
		phase := apiv1.PhaseSucceeded
		if i%3 == 1 {
			phase = apiv1.PhaseFailed
		}
		items = append(items, apiv1.NodeStatus{Name: fmt.Sprint("b.", i), Parent: "b", Phase: phase})
	}
	apply(t, s, &store.Change{
		Run: "r1", Owner: "me", Added: items,
		Attempts: []store.AttemptRow{{Node: "b.4", AttemptStatus: apiv1.AttemptStatus{Number: 1, ID: "r1/b.4/1", Phase: apiv1.PhaseFailed}}},
	})
	b := "b"
	first := listNodes(t, s, store.ListNodesParams{Run: "r1", Parent: &b, After: -1, Limit: 3})
	if names(first) != "b.0 b.1 b.2" || first.Remaining != 4 || first.Counts[apiv1.PhaseFailed] != 2 || first.Counts[apiv1.PhaseSucceeded] != 5 {
		t.Errorf("first page of b's items: %q, %d remaining, counts %v", names(first), first.Remaining, first.Counts)
	}
	next := listNodes(t, s, store.ListNodesParams{Run: "r1", Parent: &b, After: first.Last, Limit: 3})
	if names(next) != "b.3 b.4 b.5" || len(next.Nodes[1].Attempts) != 1 || next.Nodes[1].Attempts[0].ID != "r1/b.4/1" {
		t.Errorf("second page: %q with %+v; want b.3 b.4 b.5, b.4 with its attempt", names(next), next.Nodes)
	}
	top := ""
	if got := listNodes(t, s, store.ListNodesParams{Run: "r1", Parent: &top, After: -1}); names(got) != "a b" || got.Remaining != 0 {
		t.Errorf("the top: %q", names(got))
	}
	failed := listNodes(t, s, store.ListNodesParams{Run: "r1", Phases: []apiv1.Phase{apiv1.PhaseFailed}, After: -1})
	if names(failed) != "b.1 b.4" || failed.Counts[apiv1.PhasePending] != 2 {
		t.Errorf("failed nodes: %q, counts %v", names(failed), failed.Counts)
	}
	if _, err := s.ListNodes(t.Context(), store.ListNodesParams{Run: "nope", After: -1}); !isNotFound(err) {
		t.Errorf("ListNodes of no run = %v, want ErrNotFound", err)
	}
}

// testNodeVersions: every write that changes what a node shows (its own
// columns, a node added, an attempt alone, a retry) stamps it with a new
// version of the run's nodes; nodes it does not touch keep theirs.
func testNodeVersions(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	since := func(v int64) string {
		t.Helper()
		return names(listNodes(t, s, store.ListNodesParams{Run: "r1", Since: &v, After: -1}))
	}
	v0 := listNodes(t, s, store.ListNodesParams{Run: "r1", After: -1}).Version
	if got := since(v0); got != "" {
		t.Errorf("since the run was created: %q", got)
	}
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Nodes: []apiv1.NodeStatus{{Name: "a", Phase: apiv1.PhaseRunning}}})
	v1 := listNodes(t, s, store.ListNodesParams{Run: "r1", After: -1}).Version
	if got := since(v0); got != "a" || v1 <= v0 {
		t.Errorf("since a started: %q (version %d after %d), want a", got, v1, v0)
	}
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Attempts: []store.AttemptRow{{Node: "b", AttemptStatus: apiv1.AttemptStatus{Number: 1, ID: "r1/b/1", Phase: apiv1.PhaseRunning}}}})
	if got := since(v1); got != "b" {
		t.Errorf("since b's attempt was written: %q, want b", got)
	}
	v2 := listNodes(t, s, store.ListNodesParams{Run: "r1", After: -1}).Version
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Added: []apiv1.NodeStatus{{Name: "a.0", Parent: "a", Phase: apiv1.PhasePending}}})
	if got := since(v2); got != "a.0" {
		t.Errorf("since a.0 was added: %q, want a.0", got)
	}
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Status: &apiv1.RunStatus{Phase: apiv1.PhasePending}})
	v3 := listNodes(t, s, store.ListNodesParams{Run: "r1", After: -1}).Version
	apply(t, s, &store.Change{Run: "r1", Owner: "me", Nodes: []apiv1.NodeStatus{{Name: "b", Phase: apiv1.PhaseFailed}}})
	finish(t, s, "r1", apiv1.PhaseFailed)
	v4 := listNodes(t, s, store.ListNodesParams{Run: "r1", After: -1}).Version
	if err := s.RetryRun(t.Context(), "r1", store.Retry{Owner: "me", Until: t0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := since(v4); !strings.Contains(got, "b") || since(v3) == "" {
		t.Errorf("since the retry: %q, want b (reset to Pending) among them", got)
	}
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
