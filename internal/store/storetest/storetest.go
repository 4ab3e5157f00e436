// Package storetest is the conformance suite every store.Store passes.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Run runs the suite. newStore must return an empty store and arrange its
// cleanup with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	t.Run("created run reads back with its nodes", func(t *testing.T) { t.Parallel(); testCreateGet(t, newStore(t)) })
	t.Run("a taken ID is a conflict", func(t *testing.T) { t.Parallel(); testConflict(t, newStore(t)) })
	t.Run("apply writes a round and fences other owners", func(t *testing.T) { t.Parallel(); testApply(t, newStore(t)) })
	t.Run("changes applied at once are each stored or refused alone", func(t *testing.T) { t.Parallel(); testApplyTogether(t, newStore(t)) })
	t.Run("a round of many rows is stored whole and in order", func(t *testing.T) { t.Parallel(); testApplyManyRows(t, newStore(t)) })
	t.Run("of one attempt written twice in a round the later is stored", func(t *testing.T) { t.Parallel(); testApplyOneAttemptTwice(t, newStore(t)) })
	t.Run("a node's stored artifacts read back whole", func(t *testing.T) { t.Parallel(); testNodeArtifacts(t, newStore(t)) })
	t.Run("claims respect live leases and take dead ones", func(t *testing.T) { t.Parallel(); testClaim(t, newStore(t)) })
	t.Run("two claimers never both win a run", func(t *testing.T) { t.Parallel(); testClaimRace(t, newStore(t)) })
	t.Run("renewal reports cancel requests", func(t *testing.T) { t.Parallel(); testCancel(t, newStore(t)) })
	t.Run("list filters and pages by cursor", func(t *testing.T) { t.Parallel(); testList(t, newStore(t)) })
	t.Run("tokens are found by hash until revoked", func(t *testing.T) { t.Parallel(); testTokens(t, newStore(t)) })
	t.Run("a run reads back every field it was created with", func(t *testing.T) { t.Parallel(); testRunFields(t, newStore(t)) })
	t.Run("apply keeps every attempt of a round as written", func(t *testing.T) { t.Parallel(); testApplyAttempts(t, newStore(t)) })
	t.Run("list filters by phase, name and unfinished", func(t *testing.T) { t.Parallel(); testListFilters(t, newStore(t)) })
	t.Run("list filters by phases, time and search, either order", func(t *testing.T) { t.Parallel(); testListSearch(t, newStore(t)) })
	t.Run("runs are counted by phase", func(t *testing.T) { t.Parallel(); testCount(t, newStore(t)) })
	t.Run("every label selector pages through the runs as a test of each run's labels would", func(t *testing.T) { t.Parallel(); testLabelIndex(t, newStore(t)) })
	t.Run("runs counted as they change are what a count of every run says", func(t *testing.T) { t.Parallel(); testCountsAfterWorkload(t, newStore(t)) })
	t.Run("events page by sequence and limit", func(t *testing.T) { t.Parallel(); testEventPages(t, newStore(t)) })
	t.Run("nodes page by position, parent and phase", func(t *testing.T) { t.Parallel(); testNodePages(t, newStore(t)) })
	t.Run("every write that changes a node gives it a new version", func(t *testing.T) { t.Parallel(); testNodeVersions(t, newStore(t)) })
	t.Run("requests about an ended run are refused with its phase", func(t *testing.T) { t.Parallel(); testRequestPhases(t, newStore(t)) })
	t.Run("retry makes a failed run pending from where it stopped", func(t *testing.T) { t.Parallel(); testRetryRun(t, newStore(t)) })
	t.Run("retry keeps what a group that succeeded holds", func(t *testing.T) { t.Parallel(); testRetryKeepsWhatASucceededGroupHolds(t, newStore(t)) })
	t.Run("a released lease can be claimed at once", func(t *testing.T) { t.Parallel(); testReleaseLease(t, newStore(t)) })
	t.Run("secrets are kept per project and never listed with values", func(t *testing.T) { t.Parallel(); testSecrets(t, newStore(t)) })
	t.Run("templates are kept per project and a replace keeps when one was created", func(t *testing.T) { t.Parallel(); testTemplates(t, newStore(t)) })
	t.Run("schedules are kept per project, and a replace keeps their status, which never goes back", func(t *testing.T) { t.Parallel(); testSchedules(t, newStore(t)) })
	t.Run("runtimes count versions per kind, project and name and keep the old ones", func(t *testing.T) { t.Parallel(); testRuntimes(t, newStore(t)) })
	t.Run("runtimes are listed per project with the cluster ones, and deleted by kind", func(t *testing.T) { t.Parallel(); testRuntimeScopes(t, newStore(t)) })
	t.Run("a cache entry reads back, is replaced and marked used", func(t *testing.T) { t.Parallel(); testCacheEntries(t, newStore(t)) })
	t.Run("cache entries are listed by filter, most recently used first", func(t *testing.T) { t.Parallel(); testCacheList(t, newStore(t)) })
	t.Run("deleting cache entries counts those there were", func(t *testing.T) { t.Parallel(); testCacheDelete(t, newStore(t)) })
	t.Run("a cache key is reserved by one holder at a time", func(t *testing.T) { t.Parallel(); testCacheReservations(t, newStore(t)) })
	t.Run("a federation, its shares and its orders read back as written", func(t *testing.T) { t.Parallel(); testFederation(t, newStore(t)) })
	t.Run("the federation channel keeps pieces until taken and logs both ends", func(t *testing.T) { t.Parallel(); testChannel(t, newStore(t)) })
	t.Run("gate inputs read back whole, oldest first, per run", func(t *testing.T) { t.Parallel(); testGateInputs(t, newStore(t)) })
	t.Run("gate inputs to an unknown run or node or an ended run are refused", func(t *testing.T) { t.Parallel(); testGateInputRefusals(t, newStore(t)) })
	t.Run("a deleted run leaves no row behind and the others untouched", func(t *testing.T) { t.Parallel(); testDeleteRun(t, newStore(t)) })
	t.Run("an unfinished or unknown run is not deleted", func(t *testing.T) { t.Parallel(); testDeleteRunRefusals(t, newStore(t)) })
	t.Run("a run a live rerun reads from is not deleted", func(t *testing.T) { t.Parallel(); testRerunKeepsItsSource(t, newStore(t)) })
	t.Run("finished runs expire their TTL after they finished", func(t *testing.T) { t.Parallel(); testExpiredRuns(t, newStore(t)) })
	t.Run("runs beyond their name's history limit are found, oldest first", func(t *testing.T) { t.Parallel(); testRunsOverHistory(t, newStore(t)) })
	t.Run("a node's kind and gate status are kept and a retry makes a gate wait afresh", func(t *testing.T) { t.Parallel(); testGateStatusAndRetry(t, newStore(t)) })
	t.Run("a rerun's preset nodes and source read back", func(t *testing.T) { t.Parallel(); testPresetNodes(t, newStore(t)) })
	t.Run("retry of a rerun keeps its preset nodes", func(t *testing.T) { t.Parallel(); testRetryKeepsPresetNodes(t, newStore(t)) })
	t.Run("progress is kept with the run's status and counted afresh on retry", func(t *testing.T) { t.Parallel(); testProgress(t, newStore(t)) })
	t.Run("one replica leads at a time, each new leader under a new term", func(t *testing.T) { t.Parallel(); testLeadership(t, newStore(t)) })
	t.Run("of replicas bidding at once one leads", func(t *testing.T) { t.Parallel(); testLeadershipRace(t, newStore(t)) })
	t.Run("writes under an ended term are refused and a new leader claims at once", func(t *testing.T) { t.Parallel(); testFencing(t, newStore(t)) })
	t.Run("parties are found by name and by credential hash, credentials sealed and updates in place", func(t *testing.T) { t.Parallel(); testParties(t, newStore(t)) })
	t.Run("project quotas are stored, replaced in place and deleted", func(t *testing.T) { t.Parallel(); testQuotas(t, newStore(t)) })
	t.Run("a submission key finds its run in its project, once, and goes with it", func(t *testing.T) { t.Parallel(); testSubmitKeys(t, newStore(t)) })
	t.Run("of submissions with one key at once one creates a run", func(t *testing.T) { t.Parallel(); testSubmitKeyRace(t, newStore(t)) })
}

// NewRun returns a run named id with tasks a and b, leased to owner for an hour.
func NewRun(id apiv1.RunID, owner string) store.CreateRunParams {
	return store.CreateRunParams{
		Run: apiv1.Run{
			ID: id, Name: "wf", Kind: apiv1.KindWorkflow, CreatedAt: t0, Params: map[string]string{"p": "1"},
			Workflow: &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "wf"}},
		},
		Nodes: []string{"a", "b"}, Owner: owner, LeaseUntil: t0.Add(time.Hour),
	}
}

func mustCreate(t *testing.T, s store.Store, p store.CreateRunParams) {
	t.Helper()
	if err := s.CreateRun(t.Context(), p); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
}

func testCreateGet(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	got, err := s.GetRun(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	want := &apiv1.Run{
		ID: "r1", Name: "wf", Kind: apiv1.KindWorkflow, CreatedAt: t0, Params: map[string]string{"p": "1"}, Project: "default",
		Workflow: &apiv1.Workflow{Metadata: apiv1.ObjectMeta{Name: "wf"}},
		Status: apiv1.RunStatus{Phase: apiv1.PhasePending, Progress: &apiv1.RunProgress{Total: 2}, Nodes: []apiv1.NodeStatus{
			{Name: "a", Phase: apiv1.PhasePending}, {Name: "b", Phase: apiv1.PhasePending},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetRun (-want +got):\n%s", diff)
	}
	if _, err := s.GetRun(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetRun(unknown) = %v, want ErrNotFound", err)
	}
	events, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r1"})
	if err != nil || len(events) != 1 || events[0].Reason != "Submitted" {
		t.Errorf("ListEvents = %+v, %v; want one Submitted event", events, err)
	}
}

func testConflict(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	if err := s.CreateRun(t.Context(), NewRun("r1", "me")); !errors.Is(err, store.ErrConflict) {
		t.Errorf("second CreateRun = %v, want ErrConflict", err)
	}
}

func testApply(t *testing.T, s store.Store) {
	mustCreate(t, s, NewRun("r1", "me"))
	exit := 0
	done := t0.Add(time.Second)
	change := &store.Change{
		Run: "r1", Owner: "me",
		Status: &apiv1.RunStatus{Phase: apiv1.PhaseRunning, StartedAt: &t0},
		Nodes:  []apiv1.NodeStatus{{Name: "a", Phase: apiv1.PhaseSucceeded, StartedAt: &t0, FinishedAt: &done, Outputs: map[string]string{"x": "1"}}},
		Attempts: []store.AttemptRow{{Node: "a", AttemptStatus: apiv1.AttemptStatus{
			Number: 1, ID: "r1/a/1",
			Phase: apiv1.PhaseSucceeded, ExitCode: &exit, StartedAt: &t0, FinishedAt: &done,
		}}},
		Events: []apiv1.Event{{Node: "a", Attempt: 1, Phase: apiv1.PhaseSucceeded, Reason: "Exited", Time: done}},
	}
	if err := s.Apply(t.Context(), change); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	stolen := &store.Change{
		Run: "r1", Owner: "thief", Nodes: []apiv1.NodeStatus{{Name: "b", Phase: apiv1.PhaseFailed}},
		Events: []apiv1.Event{{Phase: apiv1.PhaseFailed, Reason: "Stolen", Time: done}},
	}
	if err := s.Apply(t.Context(), stolen); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("Apply by a non-owner = %v, want ErrLeaseLost", err)
	}
	got, err := s.GetRun(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != apiv1.PhaseRunning || got.Status.Nodes[1].Phase != apiv1.PhasePending {
		t.Errorf("phases = %s, %s; want Running, and b untouched by the fenced write", got.Status.Phase, got.Status.Nodes[1].Phase)
	}
	if diff := cmp.Diff(change.Attempts[0].AttemptStatus, got.Status.Nodes[0].Attempts[0]); diff != "" {
		t.Errorf("attempt (-want +got):\n%s", diff)
	}
	if got.Status.Nodes[0].Outputs["x"] != "1" {
		t.Errorf("outputs = %v, want x=1", got.Status.Nodes[0].Outputs)
	}
	events, _ := s.ListEvents(t.Context(), store.ListEventsParams{Run: "r1", After: 0})
	if len(events) != 2 || events[1].Reason != "Exited" || events[1].Seq <= events[0].Seq {
		t.Errorf("events = %+v, want Submitted then Exited in order", events)
	}
}

func testClaim(t *testing.T, s store.Store) {
	ctx := t.Context()
	live := NewRun("live", "other")
	expired := NewRun("expired", "other")
	expired.LeaseUntil = t0.Add(-time.Second)
	dead := NewRun("dead", "ghost")
	mine := NewRun("mine", "me") // renewed, not taken
	for _, p := range []store.CreateRunParams{live, expired, dead, mine} {
		mustCreate(t, s, p)
	}
	finished := &store.Change{Run: "dead", Owner: "ghost", Status: &apiv1.RunStatus{Phase: apiv1.PhaseSucceeded}}
	mustCreate(t, s, NewRun("old", "ghost"))
	if err := s.Apply(ctx, &store.Change{Run: "old", Owner: "ghost", Status: finished.Status}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClaimRuns(ctx, store.ClaimRunsParams{
		Owner: "me", Now: t0, Until: t0.Add(time.Minute),
		IsDead: func(o string) bool { return o == "ghost" },
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.Claim{{ID: "dead", From: "ghost"}, {ID: "expired", From: "other"}, {ID: "mine", From: "me"}}, got); diff != "" {
		t.Errorf("claimed, with whom from (-want +got):\n%s", diff)
	}
	if err := s.Apply(ctx, &store.Change{Run: "expired", Owner: "other", Status: &apiv1.RunStatus{Phase: apiv1.PhaseFailed}}); !errors.Is(err, store.ErrLeaseLost) {
		t.Errorf("old owner's Apply after takeover = %v, want ErrLeaseLost", err)
	}
}

func testClaimRace(t *testing.T, s store.Store) {
	for _, id := range []apiv1.RunID{"r1", "r2", "r3"} {
		p := NewRun(id, "")
		mustCreate(t, s, p)
	}
	var mu sync.Mutex
	won := map[apiv1.RunID]int{}
	var wg sync.WaitGroup
	for _, owner := range []string{"x", "y", "z"} {
		wg.Go(func() {
			ids, err := s.ClaimRuns(context.Background(), store.ClaimRunsParams{Owner: owner, Now: t0, Until: t0.Add(time.Minute)})
			if err != nil {
				t.Errorf("ClaimRuns(%s): %v", owner, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for _, c := range ids {
				won[c.ID]++
			}
		})
	}
	wg.Wait()
	for _, id := range []apiv1.RunID{"r1", "r2", "r3"} {
		if won[id] != 1 {
			t.Errorf("run %s was claimed %d times, want exactly once", id, won[id])
		}
	}
}

func testCancel(t *testing.T, s store.Store) {
	for _, id := range []apiv1.RunID{"r1", "r2", "r3", "r4"} {
		mustCreate(t, s, NewRun(id, "me"))
	}
	if err := s.RequestCancel(t.Context(), "r2", "ann (token t1, editor)"); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestCancel(t.Context(), "nope", "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RequestCancel(unknown) = %v, want ErrNotFound", err)
	}
	// A request asked again changes nothing and records no second event.
	for range 2 {
		if err := s.RequestSuspend(t.Context(), "r1", true, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.RequestCancel(t.Context(), "r2", "ann (token t1, editor)"); err != nil {
			t.Fatal(err)
		}
	}
	// A stop asked after a cancel leaves the cancel, and is not recorded;
	// a stop alone is a stop, recorded once.
	for _, id := range []apiv1.RunID{"r2", "r3", "r3"} {
		if err := s.RequestStop(t.Context(), id, "bob"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RequestStop(t.Context(), "nope", "bob"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RequestStop(unknown) = %v, want ErrNotFound", err)
	}
	finish(t, s, "r4", apiv1.PhaseSucceeded)
	if err := s.RequestStop(t.Context(), "r4", "bob"); !errors.Is(err, store.ErrPhase) {
		t.Errorf("RequestStop(ended) = %v, want ErrPhase", err)
	}
	wantRequests(t, s, "r2", "CancelRequested: cancel requested by ann (token t1, editor)")
	wantRequests(t, s, "r3", "StopRequested: stop requested by bob")
	wantRequests(t, s, "r1", "SuspendRequested: suspend requested")
	wantRequests(t, s, "r4")
	reqs, err := s.RenewLeases(t.Context(), store.RenewLeasesParams{Owner: "me", Until: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.Request{{Run: "r1", Suspend: true}, {Run: "r2", Cancel: true}, {Run: "r3", Stop: true}}
	if diff := cmp.Diff(want, reqs); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func testList(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i := range 5 {
		p := NewRun(apiv1.RunID(fmt.Sprint("r", i)), "")
		p.Run.CreatedAt = t0.Add(time.Duration(i) * time.Second)
		p.Run.Project = []string{"a", "b"}[i%2]
		p.Run.Labels = map[string]string{"team": []string{"x", "y"}[i%2]}
		if i == 4 {
			p.Run.Labels["gpu"] = "a100"
		}
		mustCreate(t, s, p)
	}
	ids := func(runs []*apiv1.Run) []apiv1.RunID {
		var out []apiv1.RunID
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	page1, err := s.ListRuns(ctx, store.ListRunsParams{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	last := page1[len(page1)-1]
	page2, err := s.ListRuns(ctx, store.ListRunsParams{Limit: 2, After: &store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]apiv1.RunID{"r4", "r3", "r2", "r1"}, append(ids(page1), ids(page2)...)); diff != "" {
		t.Errorf("two pages (-want +got):\n%s", diff)
	}
	inA, _ := s.ListRuns(ctx, store.ListRunsParams{Projects: []string{"a"}})
	labelled, _ := s.ListRuns(ctx, store.ListRunsParams{Label: "team=y"})
	if diff := cmp.Diff([]apiv1.RunID{"r4", "r2", "r0"}, ids(inA)); diff != "" {
		t.Errorf("project a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]apiv1.RunID{"r3", "r1"}, ids(labelled)); diff != "" {
		t.Errorf("label team=y (-want +got):\n%s", diff)
	}
	testSelectors(t, s, ids)
}

// testSelectors lists the runs of testListRuns (r4 to r0; team x on even
// ones, y on odd ones; gpu=a100 on r4 alone) with kubectl's selectors.
func testSelectors(t *testing.T, s store.Store, ids func([]*apiv1.Run) []apiv1.RunID) {
	ctx := t.Context()
	all := []apiv1.RunID{"r4", "r3", "r2", "r1", "r0"}
	for sel, want := range map[string][]apiv1.RunID{
		"team":                   all,
		"!team":                  nil,
		"gpu":                    {"r4"},
		"!gpu":                   {"r3", "r2", "r1", "r0"},
		"team==x":                {"r4", "r2", "r0"},
		"team!=x":                {"r3", "r1"},
		"gpu!=a100":              {"r3", "r2", "r1", "r0"},
		"team in (y)":            {"r3", "r1"},
		"team in (x, y),!gpu":    {"r3", "r2", "r1", "r0"},
		"gpu notin (a100, h100)": {"r3", "r2", "r1", "r0"},
		"team=x,gpu":             {"r4"},
		"team=z":                 nil,
	} {
		got, err := s.ListRuns(ctx, store.ListRunsParams{Label: sel})
		if err != nil {
			t.Errorf("selector %q: %v", sel, err)
		}
		if diff := cmp.Diff(want, ids(got)); diff != "" {
			t.Errorf("selector %q (-want +got):\n%s", sel, diff)
		}
	}
	// a page of a selector holds as many runs as the limit, and the next
	// page goes on from its last
	page1, err := s.ListRuns(ctx, store.ListRunsParams{Label: "team!=y", Limit: 2})
	if err != nil || len(page1) != 2 {
		t.Fatalf("a page of 2 of team!=y: %v, %v", ids(page1), err)
	}
	last := page1[1]
	page2, _ := s.ListRuns(ctx, store.ListRunsParams{Label: "team!=y", Limit: 2, After: &store.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}})
	if diff := cmp.Diff([]apiv1.RunID{"r4", "r2", "r0"}, append(ids(page1), ids(page2)...)); diff != "" {
		t.Errorf("pages of team!=y (-want +got):\n%s", diff)
	}
	if _, err := s.ListRuns(ctx, store.ListRunsParams{Label: "team in (x"}); apiv1.CodeOf(err) != apiv1.CodeBadRequest {
		t.Errorf("a selector that does not parse: %v, want %s", err, apiv1.CodeBadRequest)
	}
}

func testTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	tok := store.Token{ID: "t1", Name: "ci", Hash: "abc", Role: "editor", Projects: []string{"a"}, CreatedAt: t0}
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got, err := s.TokenByHash(ctx, "abc")
	if err != nil || got.Role != "editor" || got.Projects[0] != "a" {
		t.Fatalf("TokenByHash = %+v, %v", got, err)
	}
	if err := s.RevokeToken(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TokenByHash(ctx, "abc"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TokenByHash after revoke = %v, want ErrNotFound", err)
	}
	if list, _ := s.ListTokens(ctx); len(list) != 1 || !list[0].Revoked {
		t.Errorf("ListTokens = %+v, want the one token, revoked", list)
	}
	if err := s.CreateToken(ctx, store.Token{ID: "t1", Hash: "other", CreatedAt: t0}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("CreateToken with a taken ID = %v, want ErrConflict", err)
	}
	if err := s.RevokeToken(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RevokeToken(unknown) = %v, want ErrNotFound", err)
	}
}

// wantRequests checks that run id's request events, in order, are want
// ("Reason: message"), each with the run's phase.
func wantRequests(t *testing.T, s store.Store, id apiv1.RunID, want ...string) {
	t.Helper()
	evs, err := s.ListEvents(t.Context(), store.ListEventsParams{Run: id})
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if strings.HasSuffix(e.Reason, "Requested") {
			got = append(got, e.Reason+": "+e.Message)
			if e.Phase != run.Status.Phase && !run.Status.Phase.Done() {
				t.Errorf("run %s: %s event has phase %s, want the run's %s", id, e.Reason, e.Phase, run.Status.Phase)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("run %s: request events %q, want %q", id, got, want)
	}
}
