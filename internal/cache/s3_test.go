package cache

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"kiln.dev/kiln/internal/artifact/artifacttest"
	"kiln.dev/kiln/internal/store/sqlite"
)

// Two kiln homes that share the cache's index (as servers share a
// PostgreSQL store) and one S3 bucket: a result one stores, the other
// reuses, though its own directory never held the bytes; and a blob
// deleted from the bucket makes the entry a miss.
func TestCacheAcrossMachinesThroughS3(t *testing.T) {
	t.Parallel()
	repo := artifacttest.NewS3(t)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := New(st, filepath.Join(t.TempDir(), "cache"), Options{Repository: repo})
	b := New(st, filepath.Join(t.TempDir(), "cache"), Options{Repository: repo})

	e := newEntry()
	save(t, a, e, outputs(t))
	got, why := lookup(t, b, "sha256:k1", 0, t0.Add(time.Minute))
	if got == nil {
		t.Fatalf("the other home's lookup missed: %s", why)
	}
	dst := t.TempDir()
	if err := b.Materialize(t.Context(), got, dst); err != nil {
		t.Fatalf("Materialize on the other home: %v", err)
	}
	if s := readAll(t, filepath.Join(dst, "data", "sub", "b.txt")); s != "beta" {
		t.Errorf("data/sub/b.txt = %q, want beta", s)
	}
	if _, err := os.Stat(filepath.Join(b.Dir(), "blobs")); !os.IsNotExist(err) {
		t.Errorf("the home's own directory holds blobs (%v): they must be in the bucket only", err)
	}

	if err := repo.Delete(t.Context(), got.Artifacts[0].Digest); err != nil {
		t.Fatal(err)
	}
	if got, why := lookup(t, a, "sha256:k1", 0, t0.Add(2*time.Minute)); got != nil || why == "" {
		t.Fatalf("lookup after the bucket lost a blob = %v, %q; want a miss", got, why)
	}
}
