package app

import (
	"context"
	"path/filepath"

	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/postgres"
)

// openPostgres opens the PostgreSQL store at url. Secret values are sealed
// with the key in keyFile, default KILN_HOME/secret.key: replicas on other
// machines must be given the same key.
func openPostgres(ctx context.Context, home, url, keyFile string) (store.Store, error) {
	if keyFile == "" {
		keyFile = filepath.Join(home, "secret.key")
	}
	return postgres.Open(ctx, url, postgres.Options{SecretKeyFile: keyFile})
}
