package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/sqlite"
)

// Store kinds for Config.Store.
const (
	StoreSQLite = "sqlite"
)

// openStore opens the store cfg names: SQLite in home by default, or
// PostgreSQL at a postgres:// URL, which several kiln servers may share
// (replicated reports that: kiln serve then elects one leader).
func openStore(ctx context.Context, home, url string) (st store.Store, replicated bool, err error) {
	key := os.Getenv("KILN_SECRET_KEY_FILE")
	switch {
	case url == "" || url == StoreSQLite:
		st, err = sqlite.Open(ctx, filepath.Join(home, "kiln.db"), sqlite.Options{SecretKeyFile: key})
		return st, false, err
	case isPostgres(url):
		st, err = openPostgres(ctx, home, url, key)
		return st, true, err
	}
	return nil, false, &apiv1.Error{
		Code: apiv1.CodeStoreKind, Field: "store",
		Message: fmt.Sprintf("%q is not a store kiln knows: use sqlite or a postgres:// URL", redactURL(url)),
	}
}

func isPostgres(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// redactURL hides a password in a URL-like string, for messages.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return s
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return s
}
