package sqlite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestSecretValuesAreSealedAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kiln.db")
	const value = "plain-value-that-must-not-be-on-disk"
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetSecret(t.Context(), "p", "k", value); err != nil {
		t.Fatal(err)
	}
	// A value an earlier kiln kept in plain text is sealed on the next open.
	if _, err := s.wdb.ExecContext(t.Context(), `INSERT INTO secrets (project, name, value, updated_at) VALUES ('p', 'old', ?, 0)`, value+"-old"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"k": value, "old": value + "-old"} {
		if got, err := s.Secret(t.Context(), "p", name); err != nil || got != want {
			t.Errorf("Secret(p, %s) = %q, %v; want %q", name, got, err, want)
		}
	}
	s.Close()
	for _, f := range []string{"kiln.db", "kiln.db-wal"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); bytes.Contains(b, []byte("plain-value")) {
			t.Errorf("%s holds a secret value in plain text", f)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "secret.key")); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("secret.key: %v %v, want %d bytes, mode 0600", fi, err, 32)
	}

	// A lost key is reported, never replaced by a new one.
	if err := os.Rename(filepath.Join(dir, "secret.key"), filepath.Join(dir, "kept.key")); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Secret(t.Context(), "p", "k")
	if apiv1.CodeOf(err) != apiv1.CodeSecretKey {
		t.Errorf("Secret without the key = %v, want %s", err, apiv1.CodeSecretKey)
	}
	if err := s.SetSecret(t.Context(), "p", "new", "x"); apiv1.CodeOf(err) != apiv1.CodeSecretKey {
		t.Errorf("SetSecret without the key = %v, want %s", err, apiv1.CodeSecretKey)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "secret.key")); err == nil {
		t.Error("a new key was made over sealed values")
	}
	// The key may live elsewhere.
	s, err = Open(t.Context(), path, Options{SecretKeyFile: filepath.Join(dir, "kept.key")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Secret(t.Context(), "p", "k"); err != nil || got != value {
		t.Errorf("Secret with the key moved = %q, %v", got, err)
	}
}
