package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/store/sqlite"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newCache is a cache on a real SQLite store in a temporary home.
func newCache(t *testing.T, o Options) *Cache {
	t.Helper()
	home := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(home, "kiln.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(st, filepath.Join(home, "cache"), o)
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

// outputs is a task's output directory with a file artifact (model.bin),
// an executable file artifact (run.sh) and a directory artifact (data)
// holding a plain file, an executable and a file in a subdirectory.
func outputs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "model.bin"), "weights", 0o644)
	writeFile(t, filepath.Join(dir, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	writeFile(t, filepath.Join(dir, "data", "a.txt"), "alpha", 0o644)
	writeFile(t, filepath.Join(dir, "data", "bin", "tool"), "#!/bin/sh\n", 0o755)
	writeFile(t, filepath.Join(dir, "data", "sub", "b.txt"), "beta", 0o600)
	return dir
}

// newEntry is an entry of sha256:k1 in project p naming the artifacts of outputs.
func newEntry() *apiv1.CacheEntry {
	return &apiv1.CacheEntry{
		Key: "sha256:k1", Project: "p", Workflow: "wf", Task: "train", SourceRun: "r1", SourceNode: "train",
		Outputs: map[string]string{"loss": "0.5"},
		Artifacts: []apiv1.CachedArtifact{
			{Name: "model", Path: "model.bin"},
			{Name: "script", Path: "run.sh"},
			{Name: "data", Path: "data"},
		},
		CreatedAt: t0, UsedAt: t0,
	}
}

func save(t *testing.T, c *Cache, e *apiv1.CacheEntry, dir string) {
	t.Helper()
	if err := c.Save(t.Context(), e, dir); err != nil {
		t.Fatalf("Save(%s): %v", e.Key, err)
	}
}

func lookup(t *testing.T, c *Cache, key string, maxAge time.Duration, now time.Time) (*apiv1.CacheEntry, string) {
	t.Helper()
	e, why, err := c.Lookup(t.Context(), key, maxAge, now)
	if err != nil {
		t.Fatalf("Lookup(%s): %v", key, err)
	}
	if (e == nil) == (why == "") {
		t.Fatalf("Lookup(%s) = %v, %q: want an entry or a reason, not both or neither", key, e, why)
	}
	return e, why
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSaveLookupMaterialize(t *testing.T) {
	t.Parallel()
	c := newCache(t, Options{})
	e := newEntry()
	save(t, c, e, outputs(t))
	if e.Size != int64(len("weights")+len("#!/bin/sh\necho hi\n")+len("alpha")+len("#!/bin/sh\n")+len("beta")) {
		t.Errorf("Size = %d, want the bytes of every artifact", e.Size)
	}
	got, _ := lookup(t, c, "sha256:k1", 0, t0.Add(time.Hour))
	if diff := cmp.Diff(e.Artifacts, got.Artifacts); diff != "" {
		t.Errorf("looked-up artifacts (-saved +got):\n%s", diff)
	}
	if !got.UsedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("after a lookup UsedAt = %v, want the lookup's time", got.UsedAt)
	}
	if stored, _ := c.List(t.Context(), apiv1.CacheQuery{}); len(stored) != 1 || !stored[0].UsedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("List after a lookup = %+v, want the entry marked used", stored)
	}

	dst := t.TempDir()
	if err := c.Materialize(t.Context(), got, dst); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]struct {
		content string
		exec    bool
	}{
		"model.bin":      {"weights", false},
		"run.sh":         {"#!/bin/sh\necho hi\n", true},
		"data/a.txt":     {"alpha", false},
		"data/bin/tool":  {"#!/bin/sh\n", true},
		"data/sub/b.txt": {"beta", false},
	} {
		path := filepath.Join(dst, filepath.FromSlash(rel))
		if got := readAll(t, path); got != want.content {
			t.Errorf("%s holds %q, want %q", rel, got, want.content)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if exec := fi.Mode().Perm()&0o100 != 0; exec != want.exec {
			t.Errorf("%s has mode %v: executable %t, want %t", rel, fi.Mode(), exec, want.exec)
		}
		if fi.Mode().Perm()&0o400 == 0 {
			t.Errorf("%s has mode %v, want it readable", rel, fi.Mode())
		}
	}
	if err := c.Materialize(t.Context(), got, dst); err != nil {
		t.Errorf("materializing again over the same directory: %v", err)
	}
}

func TestEmptyDirectoryArtifactIsReused(t *testing.T) {
	t.Parallel()
	c := newCache(t, Options{})
	out := t.TempDir()
	if err := os.Mkdir(filepath.Join(out, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := &apiv1.CacheEntry{Key: "sha256:empty", Project: "p", Artifacts: []apiv1.CachedArtifact{{Name: "logs", Path: "logs"}}, CreatedAt: t0, UsedAt: t0}
	save(t, c, e, out)
	got, why := lookup(t, c, "sha256:empty", 0, t0)
	if got == nil {
		t.Fatalf("an entry whose artifact is an empty directory was not reused: %s", why)
	}
	dst := t.TempDir()
	if err := c.Materialize(t.Context(), got, dst); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "logs")); err != nil || !fi.IsDir() {
		t.Errorf("materialized logs = %v, %v; want an empty directory", fi, err)
	}
}

// blobOf is the path of the blob holding the file rel of e's artifact name.
func blobOf(t *testing.T, c *Cache, e *apiv1.CacheEntry, name, rel string) string {
	t.Helper()
	for _, a := range e.Artifacts {
		if a.Name != name {
			continue
		}
		for _, f := range artifact.Files(a) {
			if f.Path == rel {
				return c.repo.(*artifact.Dir).Path(f.Digest)
			}
		}
	}
	t.Fatalf("entry %s has no file %s in artifact %s", e.Key, rel, name)
	return ""
}

func TestDamagedEntryIsAMissAndRemoved(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		artifact, file string
		damage         func(path string) error
		wantWhy        string
	}{
		"a file artifact's blob altered": {
			artifact: "model", damage: func(p string) error { return forceWrite(p, "WEIGHTS") }, wantWhy: "altered",
		},
		"a directory's file removed": {
			artifact: "data", file: "sub/b.txt", damage: os.Remove, wantWhy: "missing",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCache(t, Options{})
			e := newEntry()
			save(t, c, e, outputs(t))
			blob := blobOf(t, c, e, tc.artifact, tc.file)
			if err := tc.damage(blob); err != nil {
				t.Fatal(err)
			}
			got, why := lookup(t, c, "sha256:k1", 0, t0)
			if got != nil || !strings.Contains(why, tc.wantWhy) || !strings.Contains(why, "artifact "+tc.artifact) {
				t.Errorf("Lookup of a damaged entry = %v, %q; want a miss saying the artifact %s is %s", got, why, tc.artifact, tc.wantWhy)
			}
			if list, _ := c.List(t.Context(), apiv1.CacheQuery{}); len(list) != 0 {
				t.Errorf("the damaged entry is still listed: %+v", list)
			}
			if _, why := lookup(t, c, "sha256:k1", 0, t0); !strings.Contains(why, "no result") {
				t.Errorf("a second lookup says %q, want no result stored", why)
			}

			again := newEntry()
			save(t, c, again, outputs(t))
			got, why = lookup(t, c, "sha256:k1", 0, t0)
			if got == nil {
				t.Fatalf("the result stored again after the damage is not reused: %s", why)
			}
			if content := readAll(t, blobOf(t, c, got, tc.artifact, tc.file)); tc.file == "" && content != "weights" {
				t.Errorf("the blob stored again holds %q, want the task's bytes", content)
			}
		})
	}
}

// forceWrite replaces the content of the read-only file at path.
func forceWrite(path, content string) error {
	if err := os.Chmod(path, 0o644); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func TestLookupMaxAge(t *testing.T) {
	t.Parallel()
	c := newCache(t, Options{})
	save(t, c, newEntry(), outputs(t))
	if e, why := lookup(t, c, "sha256:k1", time.Hour, t0.Add(30*time.Minute)); e == nil {
		t.Errorf("an entry younger than maxAge was not reused: %s", why)
	}
	e, why := lookup(t, c, "sha256:k1", time.Hour, t0.Add(2*time.Hour))
	if e != nil || !strings.Contains(why, "maxAge") || !strings.Contains(why, "r1") {
		t.Errorf("Lookup past maxAge = %v, %q; want a miss naming maxAge and the source run", e, why)
	}
	if e, why := lookup(t, c, "sha256:k1", 0, t0.Add(1000*time.Hour)); e == nil {
		t.Errorf("with no maxAge an old entry was not reused: %s", why)
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	c := newCache(t, Options{})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f"), "one", 0o644)
	writeFile(t, filepath.Join(dir, "d", "x"), "x", 0o644)
	writeFile(t, filepath.Join(dir, "d", "y", "z"), "z", 0o644)
	digest := func(rel string) string {
		t.Helper()
		d, err := c.Digest(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 {
			t.Fatalf("Digest(%s) = %q, want sha256:<64 hex>", rel, d)
		}
		return d
	}
	file, tree := digest("f"), digest("d")
	if digest("f") != file || digest("d") != tree {
		t.Errorf("digests changed with nothing changed")
	}
	if other := newCache(t, Options{}); mustDigest(t, other, filepath.Join(dir, "d")) != tree {
		t.Errorf("another cache computes another digest of the same directory")
	}

	writeFile(t, filepath.Join(dir, "f"), "two", 0o644) // same size, at once
	if digest("f") == file {
		t.Errorf("a file's digest did not change when its content did")
	}
	writeFile(t, filepath.Join(dir, "d", "y", "z"), "Z", 0o644)
	changed := digest("d")
	if changed == tree {
		t.Errorf("a directory's digest did not change when a file's content did")
	}
	if err := os.Chmod(filepath.Join(dir, "d", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if digest("d") == changed {
		t.Errorf("a directory's digest did not change when a file's mode did")
	}
	writeFile(t, filepath.Join(dir, "d", "new"), "", 0o644)
	if digest("d") == changed {
		t.Errorf("a directory's digest did not change when a file was added")
	}
	if _, err := c.Digest(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("Digest of a missing path succeeded")
	}
}

func TestDigestOfAFileRewrittenWithinOneTimestamp(t *testing.T) {
	t.Parallel()
	c := newCache(t, Options{})
	path := filepath.Join(t.TempDir(), "f")
	stamp := time.Now()
	write := func(content string) string {
		t.Helper()
		writeFile(t, path, content, 0o644)
		if err := os.Chtimes(path, stamp, stamp); err != nil { // a coarse clock: both writes at one time
			t.Fatal(err)
		}
		return mustDigest(t, c, path)
	}
	if first, second := write("one"), write("two"); first == second {
		t.Errorf("a file rewritten with the same size and modification time kept its digest %s", first)
	}
}

func mustDigest(t *testing.T, c *Cache, path string) string {
	t.Helper()
	d, err := c.Digest(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestKeyOf(t *testing.T) {
	t.Parallel()
	type in struct{ Command, Version string }
	a, err := KeyOf(in{"train", "1"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KeyOf(in{"train", "1"})
	c, _ := KeyOf(in{"train", "2"})
	if a != b || a == c || !strings.HasPrefix(a, "sha256:") {
		t.Errorf("KeyOf = %s, %s, %s; want equal keys for equal inputs, another for another version", a, b, c)
	}
	if _, err := KeyOf(func() {}); err == nil {
		t.Errorf("KeyOf of a function succeeded")
	}
}
