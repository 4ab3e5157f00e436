package cache

import (
	"context"
	"fmt"
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
	return artifact.Upload(ctx, c.repo, a, path)
}

// Materialize places e's artifacts under dir, at their paths, for the
// tasks that read them, as copies of the blobs checked against their
// digests. A copy, not a link: a task that alters what it reads must not
// alter the cache, nor other runs' copies.
func (c *Cache) Materialize(ctx context.Context, e *apiv1.CacheEntry, dir string) error {
	for _, a := range e.Artifacts {
		if err := artifact.Download(ctx, c.repo, a, filepath.Join(dir, filepath.FromSlash(a.Path))); err != nil {
			return fmt.Errorf("placing artifact %s: %w", a.Name, err)
		}
	}
	return nil
}
