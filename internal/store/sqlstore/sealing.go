package sqlstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// sealedPrefix marks a secret value sealed with the store's key; a value
// without it was written by a kiln that kept values in plain text, and is
// sealed when the store is opened.
const sealedPrefix = "aes256gcm:"

// keySize is the size of the secret key, AES-256.
const keySize = 32

// sealer seals and opens secret values with the key kept in a file beside
// (or away from) the database, so that a copy of the database alone gives
// no secret away. Each value is bound to its project and name.
type sealer struct {
	path string
	aead cipher.AEAD
	mac  []byte // the key of Sign, derived from the sealing key
	err  error  // why values cannot be sealed or opened, when they cannot
}

// loadSealer reads the key at path, or makes one when there is none and
// no value was ever sealed: a lost key is reported, never replaced.
func loadSealer(ctx context.Context, s *Store, path string) *sealer {
	sl := &sealer{path: path}
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		var sealed int
		if err := s.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM secrets WHERE value LIKE ?) + (SELECT COUNT(*) FROM parties WHERE credential LIKE ?)`,
			sealedPrefix+"%", sealedPrefix+"%").Scan(&sealed); err != nil {
			sl.err = err
			return sl
		}
		if sealed > 0 {
			sl.err = sl.keyError(fmt.Sprintf("the key is missing, and %d secret values (or party credentials) were sealed with it", sealed))
			return sl
		}
		key, err = newKey(path)
	}
	switch {
	case err != nil:
		sl.err = sl.keyError(err.Error())
	case len(key) != keySize:
		sl.err = sl.keyError(fmt.Sprintf("the key is %d bytes, want %d", len(key), keySize))
	default:
		block, _ := aes.NewCipher(key) // the size is right
		sl.aead, _ = cipher.NewGCM(block)
		h := hmac.New(sha256.New, key)
		h.Write([]byte("kiln sign key"))
		sl.mac = h.Sum(nil)
	}
	return sl
}

// newKey writes a fresh random key to path, readable by its owner alone.
func newKey(path string) ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) { // another process made it first
		return os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	_, err = f.Write(key)
	return key, errors.Join(err, f.Sync(), f.Close())
}

func (sl *sealer) keyError(why string) error {
	return &apiv1.Error{Code: apiv1.CodeSecretKey, File: sl.path, Message: "secret values cannot be sealed or opened: " + why}
}

// seal encrypts value for project's secret name.
func (sl *sealer) seal(project, name, value string) (string, error) {
	if sl.err != nil {
		return "", sl.err
	}
	nonce := make([]byte, sl.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := sl.aead.Seal(nonce, nonce, []byte(value), []byte(project+"/"+name))
	return sealedPrefix + base64.StdEncoding.EncodeToString(out), nil
}

// open decrypts what seal made of project's secret name.
func (sl *sealer) open(project, name, stored string) (string, error) {
	if sl.err != nil {
		return "", sl.err
	}
	raw, ok := strings.CutPrefix(stored, sealedPrefix)
	if !ok {
		return stored, nil // sealed on the next open of the store
	}
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil || len(b) < sl.aead.NonceSize() {
		return "", sl.keyError(fmt.Sprintf("the value of %s/%s is damaged", project, name))
	}
	n := sl.aead.NonceSize()
	plain, err := sl.aead.Open(nil, b[:n], b[n:], []byte(project+"/"+name))
	if err != nil {
		return "", sl.keyError(fmt.Sprintf("the value of %s/%s was not sealed with this key", project, name))
	}
	return string(plain), nil
}

// sealPlain seals the values an earlier kiln kept in plain text.
func (s *Store) sealPlain(ctx context.Context) error {
	if s.sealer.aead == nil {
		return nil // the key's problem is reported when a secret is used
	}
	rows, err := s.wdb.QueryContext(ctx, `SELECT project, name, value FROM secrets WHERE value NOT LIKE ?`, sealedPrefix+"%")
	if err != nil {
		return err
	}
	type row struct{ project, name, value string }
	var plain []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.project, &r.name, &r.value); err != nil {
			rows.Close()
			return err
		}
		plain = append(plain, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, r := range plain {
		sealed, err := s.sealer.seal(r.project, r.name, r.value)
		if err != nil {
			return err
		}
		if _, err := s.wdb.ExecContext(ctx, `UPDATE secrets SET value = ? WHERE project = ? AND name = ? AND value = ?`,
			sealed, r.project, r.name, r.value); err != nil {
			return err
		}
	}
	return nil
}

// Sign implements store.Secrets: an HMAC-SHA256 of data under purpose,
// with a key derived from the sealing key.
func (s *Store) Sign(purpose string, data []byte) ([]byte, error) {
	if s.sealer.err != nil {
		return nil, s.sealer.err
	}
	h := hmac.New(sha256.New, s.sealer.mac)
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(data)
	return h.Sum(nil), nil
}
