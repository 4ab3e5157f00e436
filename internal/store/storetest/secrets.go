package storetest

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"kiln.dev/kiln/internal/store"
)

func testSecrets(t *testing.T, s store.Store) {
	ctx := t.Context()
	for _, sec := range [][3]string{{"a", "db", "one"}, {"a", "api", "two"}, {"b", "db", "three"}, {"a", "db", "four"}} {
		if err := s.SetSecret(ctx, sec[0], sec[1], sec[2]); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := s.Secret(ctx, "a", "db"); err != nil || v != "four" {
		t.Errorf("Secret(a, db) = %q, %v; want the value set last", v, err)
	}
	if v, err := s.Secret(ctx, "b", "db"); err != nil || v != "three" {
		t.Errorf("Secret(b, db) = %q, %v; projects keep their own", v, err)
	}
	if names, err := s.SecretNames(ctx, "a"); err != nil || !cmp.Equal(names, []string{"api", "db"}) {
		t.Errorf("SecretNames(a) = %v, %v; want api, db", names, err)
	}
	if names, err := s.SecretNames(ctx, "empty"); err != nil || len(names) != 0 {
		t.Errorf("SecretNames(empty) = %v, %v; want none", names, err)
	}
	if err := s.DeleteSecret(ctx, "a", "db"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Secret(ctx, "a", "db"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Secret after delete = %v, want ErrNotFound", err)
	}
	if err := s.DeleteSecret(ctx, "a", "db"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice = %v, want ErrNotFound", err)
	}
}
