package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

// newCacheEntry is an entry of key in project, computed by workflow's task
// and last used at used.
func newCacheEntry(key, project, workflow, task string, used time.Time) *apiv1.CacheEntry {
	return &apiv1.CacheEntry{
		Key: key, Project: project, Workflow: workflow, Task: task, Version: "v1",
		SourceRun: "r1", SourceNode: task, Outputs: map[string]string{"loss": "0.5"},
		Artifacts: []apiv1.CachedArtifact{{
			Name: "model", Path: "model", Digest: "sha256:aa", Size: 3,
			Files: []apiv1.CachedFile{{Path: "w.bin", Digest: "sha256:bb", Size: 3, Mode: 0o755}},
		}},
		Size: 3, CreatedAt: t0, UsedAt: used,
	}
}

func mustPutCacheEntry(t *testing.T, s store.Store, e *apiv1.CacheEntry) {
	t.Helper()
	if err := s.PutCacheEntry(t.Context(), e); err != nil {
		t.Fatalf("PutCacheEntry(%s): %v", e.Key, err)
	}
}

func testCacheEntries(t *testing.T, s store.Store) {
	ctx := t.Context()
	expires := t0.Add(time.Hour)
	e := newCacheEntry("k1", "a", "wf", "train", t0)
	e.ExpiresAt = &expires
	mustPutCacheEntry(t, s, e)
	got, err := s.CacheEntry(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(e, got); diff != "" {
		t.Errorf("CacheEntry after put (-want +got):\n%s", diff)
	}
	if _, err := s.CacheEntry(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CacheEntry(unknown) = %v, want ErrNotFound", err)
	}

	replaced := newCacheEntry("k1", "a", "wf", "train", t0.Add(time.Minute))
	replaced.Outputs = map[string]string{"loss": "0.25"}
	mustPutCacheEntry(t, s, replaced)
	if got, err := s.CacheEntry(ctx, "k1"); err != nil || !cmp.Equal(replaced, got) {
		t.Errorf("CacheEntry after a replace = %+v, %v; want %+v (expiry dropped)", got, err, replaced)
	}

	used := t0.Add(2 * time.Hour)
	if err := s.UseCacheEntry(ctx, "k1", used); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CacheEntry(ctx, "k1"); err != nil || !got.UsedAt.Equal(used) || !got.CreatedAt.Equal(t0) {
		t.Errorf("after UseCacheEntry = %+v, %v; want used at %v, created at %v", got, err, used, t0)
	}
	if err := s.UseCacheEntry(ctx, "nope", used); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UseCacheEntry(unknown) = %v, want ErrNotFound", err)
	}
}

func testCacheList(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustPutCacheEntry(t, s, newCacheEntry("k1", "a", "wf", "train", t0.Add(1*time.Minute)))
	mustPutCacheEntry(t, s, newCacheEntry("k2", "a", "wf", "eval", t0.Add(3*time.Minute)))
	mustPutCacheEntry(t, s, newCacheEntry("k3", "a", "other", "train", t0.Add(2*time.Minute)))
	mustPutCacheEntry(t, s, newCacheEntry("k4", "b", "wf", "train", t0.Add(4*time.Minute)))
	if err := s.UseCacheEntry(ctx, "k1", t0.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		q    apiv1.CacheQuery
		want []string
	}{
		"everything, most recently used first": {q: apiv1.CacheQuery{}, want: []string{"k1", "k4", "k2", "k3"}},
		"one project":                          {q: apiv1.CacheQuery{Project: "a"}, want: []string{"k1", "k2", "k3"}},
		"one workflow":                         {q: apiv1.CacheQuery{Workflow: "wf"}, want: []string{"k1", "k4", "k2"}},
		"one task of one project":              {q: apiv1.CacheQuery{Project: "a", Task: "train"}, want: []string{"k1", "k3"}},
		"all three filters":                    {q: apiv1.CacheQuery{Project: "a", Workflow: "wf", Task: "eval"}, want: []string{"k2"}},
		"a project without entries":            {q: apiv1.CacheQuery{Project: "c"}, want: []string{}},
	} {
		got, err := s.ListCacheEntries(ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys := []string{}
		for _, e := range got {
			keys = append(keys, e.Key)
		}
		if diff := cmp.Diff(tc.want, keys); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if got == nil {
			t.Errorf("%s: ListCacheEntries returned nil, want an empty list", name)
		}
	}
}

func testCacheDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, k := range []string{"k1", "k2", "k3"} {
		mustPutCacheEntry(t, s, newCacheEntry(k, "a", "wf", "t", t0))
	}
	n, err := s.DeleteCacheEntries(ctx, []string{"k1", "nope", "k3", "k1"})
	if err != nil || n != 2 {
		t.Errorf("DeleteCacheEntries = %d, %v; want 2 (unknown and repeated keys ignored)", n, err)
	}
	list, _ := s.ListCacheEntries(ctx, apiv1.CacheQuery{})
	if len(list) != 1 || list[0].Key != "k2" {
		t.Errorf("after delete the list is %+v, want only k2", list)
	}
	if n, err := s.DeleteCacheEntries(ctx, nil); err != nil || n != 0 {
		t.Errorf("DeleteCacheEntries(nil) = %d, %v; want 0", n, err)
	}
}

func testCacheReservations(t *testing.T, s store.Store) {
	ctx := t.Context()
	reserve := func(key, holder, owner string, now time.Time) string {
		t.Helper()
		got, err := s.ReserveCacheKey(ctx, store.ReserveCacheKeyParams{Key: key, Holder: holder, Owner: owner, Now: now, Until: now.Add(time.Minute)})
		if err != nil {
			t.Fatalf("ReserveCacheKey(%s, %s): %v", key, holder, err)
		}
		return got
	}
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s: holder %q, want %q", what, got, want)
		}
	}
	check("a free key", reserve("k", "r1/a", "e1", t0), "r1/a")
	check("another holder while it is valid", reserve("k", "r2/a", "e2", t0.Add(30*time.Second)), "r1/a")
	check("the same holder again", reserve("k", "r1/a", "e1", t0.Add(40*time.Second)), "r1/a")
	check("another holder before the renewed one expires", reserve("k", "r2/a", "e2", t0.Add(90*time.Second)), "r1/a")
	check("another holder once it expired", reserve("k", "r2/a", "e2", t0.Add(101*time.Second)), "r2/a")

	if err := s.ReleaseCacheKey(ctx, "k", "r1/a"); err != nil {
		t.Fatal(err)
	}
	check("after a release by a former holder", reserve("k", "r3/a", "e3", t0.Add(110*time.Second)), "r2/a")
	if err := s.ReleaseCacheKey(ctx, "k", "r2/a"); err != nil {
		t.Fatal(err)
	}
	check("after its holder released it", reserve("k", "r3/a", "e3", t0.Add(110*time.Second)), "r3/a")

	mustPutCacheEntry(t, s, newCacheEntry("k", "a", "wf", "t", t0))
	check("after the key's entry was stored", reserve("k", "r4/a", "e4", t0.Add(111*time.Second)), "r4/a")

	check("a key of an engine with leases", reserve("renewed", "r5/a", "e5", t0), "r5/a")
	if _, err := s.RenewLeases(ctx, store.RenewLeasesParams{Owner: "e5", Until: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	check("after its owner renewed its leases", reserve("renewed", "r6/a", "e6", t0.Add(30*time.Minute)), "r5/a")
	check("once the renewal ran out", reserve("renewed", "r6/a", "e6", t0.Add(time.Hour)), "r6/a")
	if _, err := s.RenewLeases(ctx, store.RenewLeasesParams{Owner: "other", Until: t0.Add(10 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	check("another owner's renewal extends nothing", reserve("renewed", "r7/a", "e7", t0.Add(time.Hour+time.Minute)), "r7/a")
	if err := s.ReleaseCacheKey(ctx, "never", "r1/a"); err != nil {
		t.Errorf("ReleaseCacheKey of a key never reserved = %v, want nil", err)
	}
}
