package cache

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
)

// Save stores e, whose outputs are set and whose artifacts are listed by
// name and path only, reading the artifacts' bytes from under outDir. It
// fills in their digests and sizes. Then, if the cache is over its size,
// it removes the least recently used entries.
func (c *Cache) Save(ctx context.Context, e *apiv1.CacheEntry, outDir string) error {
	e.Size = 0
	for k := range e.Artifacts {
		a := &e.Artifacts[k]
		if err := c.putArtifact(ctx, a, filepath.Join(outDir, filepath.FromSlash(a.Path))); err != nil {
			return fmt.Errorf("storing artifact %s: %w", a.Name, err)
		}
		e.Size += a.Size
	}
	if c.maxSize > 0 && e.Size > c.maxSize {
		return fmt.Errorf("its artifacts (%d bytes) are larger than the whole cache may hold (--cache-max-size, %d bytes)", e.Size, c.maxSize)
	}
	if err := c.store.PutCacheEntry(ctx, e); err != nil {
		return fmt.Errorf("storing a cache entry: %w", err)
	}
	if c.maxSize > 0 {
		if _, err := c.Prune(ctx, PruneParams{MaxSize: c.maxSize}); err != nil {
			c.log.Warn("keeping the cache under its size", "err", err)
		}
	}
	return nil
}

// putArtifact stores the file or directory at path as a.
func (c *Cache) putArtifact(ctx context.Context, a *apiv1.CachedArtifact, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		a.Digest, a.Size, err = c.putBlob(ctx, path)
		a.Files, a.Dir, a.Mode = nil, false, modeOf(fi)
		return err
	}
	a.Files, a.Dir, a.Mode, a.Size = []apiv1.CachedFile{}, true, 0, 0
	err = walkFiles(path, func(rel, p string, fi fs.FileInfo) error {
		d, n, err := c.putBlob(ctx, p)
		a.Files = append(a.Files, apiv1.CachedFile{Path: rel, Digest: d, Size: n, Mode: modeOf(fi)})
		a.Size += n
		return err
	})
	a.Digest = manifestDigest(a.Files)
	return err
}

// putBlob stores the file at path in the repository and returns its
// digest and size. A blob already stored is kept.
func (c *Cache) putBlob(ctx context.Context, path string) (string, int64, error) {
	b, err := c.repo.Put(ctx, path)
	return b.Digest, b.Size, err
}

// Materialize places e's artifacts under dir, at their paths, for the
// tasks that read them, as copies of the blobs checked against their
// digests.
func (c *Cache) Materialize(ctx context.Context, e *apiv1.CacheEntry, dir string) error {
	for _, a := range e.Artifacts {
		base := filepath.Join(dir, filepath.FromSlash(a.Path))
		if !isDir(a) {
			if err := c.place(ctx, a.Digest, base, fileMode(a.Mode)); err != nil {
				return fmt.Errorf("placing artifact %s: %w", a.Name, err)
			}
			continue
		}
		if err := os.MkdirAll(base, 0o755); err != nil {
			return err
		}
		for _, f := range a.Files {
			if err := c.place(ctx, f.Digest, filepath.Join(base, filepath.FromSlash(f.Path)), fs.FileMode(f.Mode)); err != nil {
				return fmt.Errorf("placing artifact %s: %w", a.Name, err)
			}
		}
	}
	return nil
}

// fileMode is the mode a file artifact is placed with: read-only unless
// it was stored executable.
func fileMode(stored uint32) fs.FileMode {
	if stored&0o111 != 0 {
		return fs.FileMode(stored).Perm()
	}
	return 0o444
}

// place copies the blob of digest to dst, with mode. A copy, not a link:
// a task that alters what it reads must not alter the cache, nor other
// runs' copies.
func (c *Cache) place(ctx context.Context, digest, dst string, mode fs.FileMode) error {
	return artifact.GetFile(ctx, c.repo, digest, dst, mode|0o400)
}
