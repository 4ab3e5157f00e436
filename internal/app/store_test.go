package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestStoreKinds(t *testing.T) {
	for url, want := range map[string]bool{
		"postgres://kiln@db:5432/kiln":         true,
		"postgresql://kiln@db/kiln":            true,
		"host=db port=5432 user=kiln dbname=k": true,
		"dbname=kiln":                          true,
		"sqlite":                               false,
		"mysql://db/kiln":                      false,
		"":                                     false,
	} {
		if got := isPostgres(url); got != want {
			t.Errorf("isPostgres(%q) = %v, want %v", url, got, want)
		}
	}
}

// TestAHomeOfReplicasOpensNoOtherStore: once kiln serve marked a home as a
// PostgreSQL store's, opening the home's own SQLite file, or another
// database, is refused with KLN-5053 and creates nothing.
func TestAHomeOfReplicasOpensNoOtherStore(t *testing.T) {
	home := t.TempDir()
	if err := markHomeStore(home, "postgres://kiln@db:5432/team"); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"", "sqlite", "postgres://kiln@db:5432/other"} {
		_, _, err := openStore(context.Background(), home, url, false, false)
		if c := apiv1.Errors(err); len(c) == 0 || c[0].Code != apiv1.CodeHomeStore {
			t.Errorf("openStore(%q) = %v, want KLN-5053", url, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "kiln.db")); !os.IsNotExist(err) {
		t.Errorf("a refused open left kiln.db behind: %v", err)
	}
	if err := checkHomeStore(home, "postgres://kiln@db:5432/team"); err != nil {
		t.Errorf("the home's own store is refused: %v", err)
	}
}
