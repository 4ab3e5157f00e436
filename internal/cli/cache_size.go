package cli

import (
	"cmp"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/resource"
)

// cacheFile is the cache section of the configuration file.
type cacheFile struct {
	// MaxSize caps the bytes of the cache's stored artifacts, a quantity
	// such as 10Gi; "0" means no limit. Default 10Gi.
	MaxSize string `json:"maxSize,omitempty"`
}

// defaultCacheMaxSize bounds the cache when neither --cache-max-size nor
// the configuration file does.
const defaultCacheMaxSize = "10Gi"

// withCacheSize sets cfg's cache bound: flag (--cache-max-size) if set,
// else the configuration file's cache.maxSize, else 10Gi.
func (e *env) withCacheSize(cfg *app.Config, flag string) error {
	if flag != "" {
		n, err := resource.ParseBytes(flag)
		if err != nil {
			return usagef("--cache-max-size %s is not a size such as 10Gi (0: no limit)%s", resource.Quote(flag), reason(err))
		}
		cfg.CacheMaxSize = n
		return nil
	}
	file, path, err := e.backend.load(e.home)
	if err != nil {
		return err
	}
	v := cmp.Or(file.Cache.MaxSize, defaultCacheMaxSize)
	n, err := resource.ParseBytes(v)
	if err != nil {
		return &apiv1.Error{
			Code: apiv1.CodeQuantity, File: path, Field: "cache.maxSize",
			Message: resource.Quote(v) + " is not a size such as 10Gi (0: no limit)" + reason(err),
		}
	}
	cfg.CacheMaxSize = n
	return nil
}
