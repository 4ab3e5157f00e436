// Package cache keeps the results of cached tasks: an index in the store
// (which outputs are stored under which key) and the artifacts' bytes in
// an artifact repository (a directory beside the store by default, or an
// S3-compatible bucket), content-addressed by SHA-256. A stored result is
// verified against its digests before it is reused; one that does not
// verify is a miss, never a wrong result.
package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/store"
)

// Cache is the cache of one kiln home. It is safe for concurrent use, and
// by several processes sharing the home.
type Cache struct {
	store   store.Caches
	repo    artifact.Repository
	dir     string
	maxSize int64
	log     *slog.Logger
	digests *digestMemo
}

// Options tune a Cache.
type Options struct {
	// MaxSize caps the bytes of stored artifacts: after a result is
	// stored, the least recently used entries are removed until the cache
	// fits. 0 means no limit.
	MaxSize int64
	// Log receives why stored results were not reused.
	Log *slog.Logger
	// Repository holds the artifacts' bytes; nil keeps them in the
	// directory New is given (artifact.NewDir).
	Repository artifact.Repository
}

// New returns the cache whose index is st and whose bytes live in
// o.Repository, or under dir when it is nil.
func New(st store.Caches, dir string, o Options) *Cache {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	repo := o.Repository
	if repo == nil {
		repo = artifact.NewDir(dir)
	}
	return &Cache{store: st, repo: repo, dir: dir, maxSize: o.MaxSize, log: log, digests: newDigestMemo()}
}

// Dir is the cache's local directory (the bytes', unless a Repository
// was given).
func (c *Cache) Dir() string { return c.dir }

// Repository is where the artifacts' bytes live.
func (c *Cache) Repository() artifact.Repository { return c.repo }

// KeyOf is the digest of v's JSON: the key of a result decided by v.
func KeyOf(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding a cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// NoResult is Lookup's reason for a key under which nothing is stored.
const NoResult = "no result is stored under this key"

// Lookup returns the entry stored under key, verified, or nil and why
// there is none to reuse: none stored, older than maxAge (0: any age), or
// damaged. A damaged entry is removed, so the next result replaces it.
func (c *Cache) Lookup(ctx context.Context, key string, maxAge time.Duration, now time.Time) (*apiv1.CacheEntry, string, error) {
	e, err := c.store.CacheEntry(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, NoResult, nil
	case err != nil:
		return nil, "", fmt.Errorf("reading the cache: %w", err)
	}
	if maxAge > 0 && now.Sub(e.CreatedAt) > maxAge {
		return nil, fmt.Sprintf("the stored result of run %s is %s old, more than maxAge %s",
			e.SourceRun, now.Sub(e.CreatedAt).Round(time.Second), maxAge), nil
	}
	if why := c.verify(ctx, e); why != "" {
		c.log.Warn("a cache entry is damaged; removing it", "key", key, "sourceRun", e.SourceRun, "reason", why)
		if _, err := c.store.DeleteCacheEntries(ctx, []string{key}); err != nil {
			return nil, "", fmt.Errorf("removing a damaged cache entry: %w", err)
		}
		return nil, "the stored result is damaged (" + why + "); it was removed", nil
	}
	if err := c.store.UseCacheEntry(ctx, key, now); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, "", fmt.Errorf("marking a cache entry used: %w", err)
	}
	e.UsedAt = now
	return e, "", nil
}

// verify checks every blob of e is stored, with its size (and, in a
// local directory, its digest), and says what is wrong, or "". An altered
// blob is removed: its bytes are no one's, and the next result that has
// its digest stores it afresh. Bytes are checked against their digests
// again when they are placed (Materialize).
func (c *Cache) verify(ctx context.Context, e *apiv1.CacheEntry) string {
	for _, a := range e.Artifacts {
		for _, f := range artifact.Files(a) {
			b, err := c.repo.Stat(ctx, f.Digest)
			switch {
			case errors.Is(err, artifact.ErrNotFound):
				return fmt.Sprintf("artifact %s: the stored file %s is missing", a.Name, f.Digest)
			case errors.Is(err, artifact.ErrDamaged):
				_ = c.repo.Delete(ctx, f.Digest) // gone already is as good
				return fmt.Sprintf("artifact %s: the stored file was altered (%v)", a.Name, err)
			case err != nil:
				return fmt.Sprintf("artifact %s: %v", a.Name, err)
			case b.Size != f.Size:
				_ = c.repo.Delete(ctx, f.Digest)
				return fmt.Sprintf("artifact %s: the stored file was altered (%d bytes, not %d)", a.Name, b.Size, f.Size)
			}
		}
	}
	return ""
}
