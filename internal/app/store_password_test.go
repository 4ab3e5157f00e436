package app

import "testing"

func TestStoreHasPassword(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"sqlite":                                  false,
		"":                                        false,
		"postgres://kiln@db:5432/kiln":            false,
		"postgres://kiln:@db:5432/kiln":           false,
		"postgres://kiln:s3cret@db:5432/kiln":     true,
		"postgresql://kiln:s3cret@db/kiln":        true,
		"postgres://db/kiln?password=s3cret":      true,
		"postgres://db/kiln?user=a@b":             false,
		"host=db user=kiln dbname=kiln":           false,
		"host=db user=kiln password=s3cret":       true,
		"host=db password= dbname=kiln":           false,
		"postgres://kiln@db/kiln?sslmode=disable": false,
	} {
		if got := StoreHasPassword(url); got != want {
			t.Errorf("StoreHasPassword(%q) = %v, want %v", url, got, want)
		}
	}
}
