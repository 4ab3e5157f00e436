package cache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// saveOne stores an entry of key in project with one file artifact
// holding content, last used at used.
func saveOne(t *testing.T, c *Cache, key, project, content string, used time.Time) *apiv1.CacheEntry {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "out"), content, 0o644)
	e := &apiv1.CacheEntry{
		Key: key, Project: project, Workflow: "wf", Task: "t", SourceRun: "r",
		Artifacts: []apiv1.CachedArtifact{{Name: "out", Path: "out"}},
		CreatedAt: used, UsedAt: used,
	}
	save(t, c, e, dir)
	return e
}

func keys(t *testing.T, c *Cache) []string {
	t.Helper()
	list, err := c.List(t.Context(), apiv1.CacheQuery{})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, e := range list {
		out = append(out, e.Key)
	}
	return out
}

func TestPrune(t *testing.T) {
	t.Parallel()
	now := t0.Add(10 * 24 * time.Hour)
	for name, tc := range map[string]struct {
		p           PruneParams
		wantKept    []string
		wantEntries int
		wantBytes   int64
	}{
		"nothing selected removes only expired entries": {
			p: PruneParams{}, wantKept: []string{"new-a", "mid-b", "old-a"}, wantEntries: 1, wantBytes: 4,
		},
		"all": {
			p: PruneParams{All: true}, wantKept: []string{}, wantEntries: 4, wantBytes: 1 + 2 + 3 + 4,
		},
		"all of one project": {
			p: PruneParams{All: true, Project: "b"}, wantKept: []string{"new-a", "old-a"}, wantEntries: 2, wantBytes: 2 + 4,
		},
		"older than two days": {
			p: PruneParams{OlderThan: 48 * time.Hour}, wantKept: []string{"new-a", "mid-b"}, wantEntries: 2, wantBytes: 3 + 4,
		},
		"at most three bytes keeps the most recently used": {
			p: PruneParams{MaxSize: 3}, wantKept: []string{"new-a", "mid-b"}, wantEntries: 2, wantBytes: 3 + 4,
		},
		"at most one byte": {
			p: PruneParams{MaxSize: 1}, wantKept: []string{"new-a"}, wantEntries: 3, wantBytes: 2 + 3 + 4,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCache(t, Options{})
			saveOne(t, c, "new-a", "a", "1", now.Add(-time.Hour))
			saveOne(t, c, "mid-b", "b", "22", now.Add(-24*time.Hour))
			saveOne(t, c, "old-a", "a", "333", now.Add(-5*24*time.Hour))
			expired := saveOne(t, c, "expired-b", "b", "4444", now.Add(-time.Minute))
			gone := now.Add(-time.Second)
			expired.ExpiresAt = &gone
			save(t, c, expired, writeOut(t, "4444"))
			tc.p.Now = now
			got, err := c.Prune(t.Context(), tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if want := (apiv1.CachePruned{Entries: tc.wantEntries, Bytes: tc.wantBytes}); got != want {
				t.Errorf("Prune = %+v, want %+v", got, want)
			}
			if diff := cmp.Diff(tc.wantKept, keys(t, c)); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

// writeOut is an output directory whose file out holds content.
func writeOut(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "out"), content, 0o644)
	return dir
}

func TestRemoveKeepsSharedBlobs(t *testing.T) {
	t.Parallel()
	c := newCache(t, Options{})
	a := saveOne(t, c, "a", "p", "shared", t0)
	saveOne(t, c, "b", "p", "shared", t0)
	saveOne(t, c, "c", "p", "own", t0)
	shared := blobOf(t, c, a, "out", "")

	got, err := c.Remove(t.Context(), []string{"a", "unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (apiv1.CachePruned{Entries: 1, Bytes: 0}); got != want {
		t.Errorf("removing an entry whose bytes another names = %+v, want %+v", got, want)
	}
	if _, err := os.Stat(shared); err != nil {
		t.Errorf("the blob b still names was removed: %v", err)
	}
	if e, why := lookup(t, c, "b", 0, t0); e == nil {
		t.Errorf("b is no longer reusable after a was removed: %s", why)
	}

	got, err = c.Remove(t.Context(), []string{"b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (apiv1.CachePruned{Entries: 2, Bytes: int64(len("shared") + len("own"))}); got != want {
		t.Errorf("removing the last entries = %+v, want %+v", got, want)
	}
	if _, err := os.Stat(shared); !os.IsNotExist(err) {
		t.Errorf("the blob no entry names is still there: %v", err)
	}
}

func TestSaveKeepsTheCacheUnderMaxSize(t *testing.T) {
	t.Parallel()
	c := newCache(t, Options{MaxSize: 5})
	saveOne(t, c, "old", "p", "123", t0)
	saveOne(t, c, "new", "p", "45", t0.Add(time.Minute))
	if diff := cmp.Diff([]string{"new", "old"}, keys(t, c)); diff != "" {
		t.Errorf("under the limit (-want +got):\n%s", diff)
	}
	saveOne(t, c, "newest", "p", "6", t0.Add(2*time.Minute))
	if diff := cmp.Diff([]string{"newest", "new"}, keys(t, c)); diff != "" {
		t.Errorf("over the limit the least recently used goes (-want +got):\n%s", diff)
	}
}
