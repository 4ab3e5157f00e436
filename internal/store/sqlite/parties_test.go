package sqlite

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
)

func TestPartyCredentialsAreSealedOrHashedAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := store.Party{
		Name: "bob", URL: "http://bob", Project: "default", CredentialHash: store.HashCredential("kpc_issued-to-bob"),
		Credential: "kpc_issued-by-bob", UpdatedAt: time.Now(),
	}
	if err := s.PutParty(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := s.db.QueryRowContext(t.Context(), `SELECT credential FROM parties WHERE name = 'bob'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix([]byte(stored), []byte("aes256gcm:")) {
		t.Errorf("the stored credential %q is not sealed", stored)
	}
	s.Close()
	for _, f := range []string{"kiln.db", "kiln.db-wal"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); bytes.Contains(b, []byte("kpc_issued")) {
			t.Errorf("%s holds a party credential in plain text", f)
		}
	}
	// A lost key is reported, never replaced, when only party credentials were sealed with it.
	if err := os.Remove(filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.GetParty(t.Context(), "bob"); apiv1.CodeOf(err) != apiv1.CodeSecretKey {
		t.Errorf("GetParty without the key = %v, want %s", err, apiv1.CodeSecretKey)
	}
}
