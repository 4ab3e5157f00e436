package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/cache"
	"kiln.dev/kiln/internal/resource"
)

// minKeyPrefix is the fewest hex digits of a key that name its entry.
const minKeyPrefix = 8

// CacheEntries lists the cache entries q selects, most recently used first.
func (a *App) CacheEntries(ctx context.Context, q apiv1.CacheQuery) ([]*apiv1.CacheEntry, error) {
	return a.Cache.List(ctx, q)
}

// RemoveCacheEntries removes the entries of keys from project's (every
// project's when empty) and the bytes no other entry needs, and says how
// much went. A key is whole ("sha256:<hex>") or a prefix of its hex of at
// least 8 digits, with or without "sha256:". Nothing is removed unless
// every key names one entry: KLN-4025 for a key that names none,
// KLN-1012 for one too short or naming several (they are listed).
func (a *App) RemoveCacheEntries(ctx context.Context, project string, keys []string) (apiv1.CachePruned, error) {
	entries, err := a.Cache.List(ctx, apiv1.CacheQuery{Project: project})
	if err != nil {
		return apiv1.CachePruned{}, err
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		if full[i], err = matchKey(entries, project, k); err != nil {
			return apiv1.CachePruned{}, err
		}
	}
	return a.Cache.Remove(ctx, full)
}

// matchKey is the key of the one entry that key names.
func matchKey(entries []*apiv1.CacheEntry, project, key string) (string, error) {
	hex := strings.TrimPrefix(strings.ToLower(key), "sha256:")
	if len(hex) < minKeyPrefix || strings.Trim(hex, "0123456789abcdef") != "" {
		return "", &apiv1.Error{
			Code: apiv1.CodeInvalidValue, Field: "key",
			Message: fmt.Sprintf("%q is not a cache key: give sha256: and its hex digits, or at least %d of them", key, minKeyPrefix),
			Hint:    "list keys with kiln cache ls",
		}
	}
	var found []string
	for _, e := range entries {
		if strings.HasPrefix(e.Key, "sha256:"+hex) {
			found = append(found, e.Key)
		}
	}
	switch len(found) {
	case 0:
		where := "the cache"
		if project != "" {
			where = fmt.Sprintf("project %q", project)
		}
		return "", &apiv1.Error{Code: apiv1.CodeNoCacheEntry, Field: "key", Message: fmt.Sprintf("%s holds no entry with key %s", where, key)}
	case 1:
		return found[0], nil
	}
	return "", &apiv1.Error{
		Code: apiv1.CodeInvalidValue, Field: "key",
		Message: fmt.Sprintf("%s names %d entries: %s", key, len(found), strings.Join(found, ", ")),
		Hint:    "give more of the key's digits",
	}
}

// PruneCache removes the entries p selects, and every expired one, and
// the bytes no entry needs any more. OlderThan is a Go duration (KLN-1009
// if not) and MaxSize a positive quantity such as 10Gi (KLN-1010 if not).
func (a *App) PruneCache(ctx context.Context, p apiv1.CachePrune) (apiv1.CachePruned, error) {
	params, err := pruneParams(p)
	if err != nil {
		return apiv1.CachePruned{}, err
	}
	return a.Cache.Prune(ctx, params)
}

// pruneParams checks p and turns it into the cache's terms; its errors
// name every field that is wrong.
func pruneParams(p apiv1.CachePrune) (cache.PruneParams, error) {
	out := cache.PruneParams{All: p.All, Project: p.Project}
	var errs []error
	if p.OlderThan != "" {
		d, err := time.ParseDuration(p.OlderThan)
		if err != nil || d <= 0 {
			errs = append(errs, &apiv1.Error{
				Code: apiv1.CodeDuration, Field: "olderThan",
				Message: resource.Quote(p.OlderThan) + " is not a positive duration such as 720h",
			})
		}
		out.OlderThan = d
	}
	if p.MaxSize != "" {
		n, err := resource.ParseBytes(p.MaxSize)
		if err != nil || n <= 0 {
			errs = append(errs, &apiv1.Error{
				Code: apiv1.CodeQuantity, Field: "maxSize",
				Message: resource.Quote(p.MaxSize) + " is not a positive size such as 10Gi",
				Hint:    "to remove every entry, prune with all (kiln cache prune --all)",
			})
		}
		out.MaxSize = n
	}
	return out, errors.Join(errs...)
}
