package cache

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
)

// PruneParams says which entries a prune removes: those expired (past
// their maxAge) always, and those any other field selects.
type PruneParams struct {
	// All removes every entry of Project (of every project when empty).
	All     bool
	Project string
	// OlderThan removes entries not used for that long; 0 keeps them.
	OlderThan time.Duration
	// MaxSize removes the least recently used entries until the rest
	// hold at most that many bytes; 0 means no limit.
	MaxSize int64
	// Now is the time of the prune; zero means now.
	Now time.Time
}

// blobGrace keeps a blob younger than this even when no entry names it:
// another process may be storing the entry that does.
const blobGrace = 10 * time.Minute

// List returns the entries q selects, most recently used first.
func (c *Cache) List(ctx context.Context, q apiv1.CacheQuery) ([]*apiv1.CacheEntry, error) {
	return c.store.ListCacheEntries(ctx, q)
}

// Prune removes the entries p selects and the bytes no entry needs.
func (c *Cache) Prune(ctx context.Context, p PruneParams) (apiv1.CachePruned, error) {
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	all, err := c.store.ListCacheEntries(ctx, apiv1.CacheQuery{Project: p.Project})
	if err != nil {
		return apiv1.CachePruned{}, fmt.Errorf("listing the cache: %w", err)
	}
	slices.SortStableFunc(all, func(a, b *apiv1.CacheEntry) int { return b.UsedAt.Compare(a.UsedAt) })
	var keys []string
	var kept int64
	for _, e := range all {
		drop := p.All || (e.ExpiresAt != nil && !e.ExpiresAt.After(p.Now)) ||
			(p.OlderThan > 0 && p.Now.Sub(e.UsedAt) > p.OlderThan) ||
			(p.MaxSize > 0 && kept+e.Size > p.MaxSize)
		if drop {
			keys = append(keys, e.Key)
			continue
		}
		kept += e.Size
	}
	return c.Remove(ctx, keys)
}

// Remove removes the entries of keys, and the bytes no entry needs any more.
func (c *Cache) Remove(ctx context.Context, keys []string) (apiv1.CachePruned, error) {
	var out apiv1.CachePruned
	named := map[string]bool{} // blobs the removed entries named: no grace for them
	for _, k := range keys {
		if e, err := c.store.CacheEntry(ctx, k); err == nil {
			for _, a := range e.Artifacts {
				for _, f := range artifact.Files(a) {
					named[f.Digest] = true
				}
			}
		}
	}
	if len(keys) > 0 {
		n, err := c.store.DeleteCacheEntries(ctx, keys)
		if err != nil {
			return out, fmt.Errorf("removing cache entries: %w", err)
		}
		out.Entries = n
	}
	freed, err := c.sweep(ctx, named)
	out.Bytes = freed
	return out, err
}

// sweep removes the blobs that no entry names, and returns the bytes
// freed. A blob that no entry ever named is kept while it is young:
// another process may be storing the entry that names it.
func (c *Cache) sweep(ctx context.Context, named map[string]bool) (int64, error) {
	entries, err := c.store.ListCacheEntries(ctx, apiv1.CacheQuery{})
	if err != nil {
		return 0, fmt.Errorf("listing the cache: %w", err)
	}
	needed := map[string]bool{}
	for _, e := range entries {
		for _, a := range e.Artifacts {
			for _, f := range artifact.Files(a) {
				needed[f.Digest] = true
			}
		}
	}
	blobs, err := c.repo.List(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("listing the cache's blobs: %w", err)
	}
	var freed int64
	for _, b := range blobs {
		if needed[b.Digest] || (!named[b.Digest] && time.Since(b.ModTime) < blobGrace) {
			continue // needed, or maybe about to be named
		}
		if err := c.repo.Delete(ctx, b.Digest); err == nil {
			freed += b.Size
		}
	}
	return freed, nil
}
