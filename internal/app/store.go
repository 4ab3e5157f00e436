package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/postgres"
	"kiln.dev/kiln/internal/store/sqlite"
)

// Store kinds for Config.Store.
const (
	StoreSQLite = "sqlite"
)

// homeStoreFile, in a home kiln serve replicas of a PostgreSQL store
// share, names that store, so that a command that forgot --store does not
// start a store of its own there (and, say, a second admin token).
const homeStoreFile = "store"

// openStore opens the store url names: SQLite in home by default, or
// PostgreSQL, which several kiln servers may share (replicated reports
// that: kiln serve then elects one leader). serving marks the home as the
// PostgreSQL store's; a home so marked opens no other store. exiting is
// Config.Exiting.
func openStore(ctx context.Context, home, url string, serving, exiting bool) (st store.Store, replicated bool, err error) {
	key := os.Getenv("KILN_SECRET_KEY_FILE")
	defer func() {
		if err == nil {
			forgetStoreSecrets()
		}
	}()
	switch {
	case url == "" || url == StoreSQLite:
		if err := checkHomeStore(home, ""); err != nil {
			return nil, false, err
		}
		st, err = sqlite.Open(ctx, filepath.Join(home, "kiln.db"), sqlite.Options{SecretKeyFile: key, Exiting: exiting})
		return st, false, err
	case isPostgres(url):
		if err := checkHomeStore(home, postgres.Where(url)); err != nil {
			return nil, false, err
		}
		st, err = openPostgres(ctx, home, url, key)
		if err == nil && serving {
			err = markHomeStore(home, postgres.Where(url))
		}
		return st, true, err
	}
	return nil, false, &apiv1.Error{
		Code: apiv1.CodeStoreKind, Field: "store",
		Message: fmt.Sprintf("%q is not a store kiln knows: use sqlite or a postgres:// URL", redactURL(url)),
	}
}

// isPostgres reports whether url names a PostgreSQL database: a
// postgres:// URL or a libpq key=value string.
func isPostgres(url string) bool {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		return true
	}
	return !strings.Contains(url, "://") && (strings.Contains(url, "host=") || strings.Contains(url, "dbname="))
}

// checkHomeStore refuses to open the store named where ("" for the home's
// SQLite file) in a home that kiln serve replicas gave to another.
func checkHomeStore(home, where string) error {
	data, err := os.ReadFile(filepath.Join(home, homeStoreFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: filepath.Join(home, homeStoreFile), Message: err.Error()}
	}
	owner := strings.TrimSpace(string(data))
	if owner == where {
		return nil
	}
	asked := where
	if asked == "" {
		asked = "its own SQLite file (no --store or KILN_STORE was given)"
	}
	return &apiv1.Error{
		Code: apiv1.CodeHomeStore, File: filepath.Join(home, homeStoreFile),
		Message: fmt.Sprintf("this home belongs to the kiln serve replicas of %s, and the command asked for %s", owner, asked),
		Hint:    fmt.Sprintf("set KILN_STORE=%s (with the password in PGPASSWORD or ~/.pgpass); to use the home with another store, remove %s", owner, filepath.Join(home, homeStoreFile)),
	}
}

// markHomeStore records, once, that home serves the store named where.
func markHomeStore(home, where string) error {
	path := filepath.Join(home, homeStoreFile)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.WriteFile(path, []byte(where+"\n"), 0o600); err != nil {
		return &apiv1.Error{Code: apiv1.CodeStoreOpen, File: path, Message: "recording the home's store: " + err.Error()}
	}
	return nil
}

// StoreHasPassword reports whether a store address holds a password: a
// URL's user:password@ or a key=value string's password=.
func StoreHasPassword(url string) bool {
	if !isPostgres(url) {
		return false // not a store: KLN-5050 says so, the password hidden
	}
	if _, rest, ok := strings.Cut(url, "://"); ok {
		userinfo, _, hasAt := strings.Cut(strings.SplitN(rest, "/", 2)[0], "@")
		_, pass, hasPass := strings.Cut(userinfo, ":")
		return (hasAt && hasPass && pass != "") || strings.Contains(strings.ToLower(url), "password=")
	}
	for _, field := range strings.Fields(url) {
		if k, v, ok := strings.Cut(field, "="); ok && strings.TrimSpace(k) == "password" && v != "" {
			return true
		}
	}
	return false
}

// forgetStoreSecrets removes from this process's environment what may
// hold the store's password, PGPASSWORD and KILN_STORE, once any store
// is open: the supervisor and tasks kiln starts inherit nothing of them.
// (The PostgreSQL store has parsed its address, password included.)
func forgetStoreSecrets() {
	_ = os.Unsetenv("PGPASSWORD")
	_ = os.Unsetenv("KILN_STORE")
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
