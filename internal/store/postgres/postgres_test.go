package postgres_test

import (
	"os"
	"path/filepath"
	"testing"

	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/pgtest"
	"kiln.dev/kiln/internal/store/postgres"
	"kiln.dev/kiln/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a store on a fresh database of the shared server.
func open(t *testing.T) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), pgtest.Shared(t).NewDatabase(t),
		postgres.Options{SecretKeyFile: filepath.Join(t.TempDir(), "secret.key")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

func TestReplicas(t *testing.T) {
	t.Parallel()
	storetest.RunReplicas(t, func(t *testing.T, n int) []store.Store {
		dsn, key := pgtest.Shared(t).NewDatabase(t), filepath.Join(t.TempDir(), "secret.key")
		var stores []store.Store
		for range n {
			s, err := postgres.Open(t.Context(), dsn, postgres.Options{SecretKeyFile: key})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores = append(stores, s)
		}
		return stores
	})
}
