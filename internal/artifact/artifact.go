// Package artifact is kiln's artifact repository (Argo's artifact
// repositories, KFP's object store): a content-addressed store of blobs,
// each kept under the SHA-256 digest of its bytes. The cache's results and
// the tasks' output artifacts go through it. Two implementations exist: a
// local directory (Dir, the default) and an S3-compatible object store
// (S3). Both pass artifacttest.Run.
package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Errors every Repository returns, for errors.Is.
var (
	// ErrNotFound: no blob is stored under the digest.
	ErrNotFound = errors.New("artifact: not found")
	// ErrDamaged: the stored bytes are not the digest's.
	ErrDamaged = errors.New("artifact: the stored bytes do not match their digest")
	// ErrBadDigest: the digest is not "sha256:" and 64 lowercase hex digits.
	ErrBadDigest = errors.New("artifact: not a sha256 digest")
)

// Blob describes one stored blob.
type Blob struct {
	// Digest is "sha256:" and the hex SHA-256 of the bytes.
	Digest string `json:"digest"`
	// Size is the number of bytes.
	Size int64 `json:"size"`
	// ModTime is when the blob was stored (last stored, when stored again).
	ModTime time.Time `json:"modTime"`
}

// Repository is a content-addressed store of blobs. Every method is safe
// for concurrent use, also by several processes (or machines) sharing the
// same storage: a blob's bytes never change once stored, so storing the
// same bytes twice is harmless.
type Repository interface {
	// Put stores the bytes of the regular file at path under their digest
	// and returns the blob. A blob already stored intact is kept.
	Put(ctx context.Context, path string) (Blob, error)
	// Get writes the bytes of digest to w, hashing them on the way; it
	// returns ErrNotFound when none are stored, and ErrDamaged (after
	// writing them) when they are not the digest's. Use GetFile to place
	// a blob in a file atomically.
	Get(ctx context.Context, digest string, w io.Writer) error
	// Stat describes the blob of digest, or returns ErrNotFound. Where it
	// can tell cheaply (a local file is hashed) it returns ErrDamaged for
	// bytes that are not the digest's.
	Stat(ctx context.Context, digest string) (Blob, error)
	// List returns the blobs whose digests start with prefix ("" for all,
	// "sha256:ab" for some), in digest order.
	List(ctx context.Context, prefix string) ([]Blob, error)
	// Delete removes the blob of digest; an absent blob is no error.
	Delete(ctx context.Context, digest string) error
}

// CheckDigest returns ErrBadDigest (wrapped, naming d) unless d is
// "sha256:" and 64 lowercase hex digits. Implementations call it before
// turning a digest into a path or key, so no digest escapes the store.
func CheckDigest(d string) error {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != sha256.Size*2 || !isHex(h) {
		return fmt.Errorf("%w: %q", ErrBadDigest, d)
	}
	return nil
}

// checkPrefix is CheckDigest for a prefix of a digest.
func checkPrefix(p string) error {
	const algo = "sha256:"
	if len(p) <= len(algo) {
		if !strings.HasPrefix(algo, p) {
			return fmt.Errorf("%w: %q is no digest's prefix", ErrBadDigest, p)
		}
		return nil
	}
	h := p[len(algo):]
	if !strings.HasPrefix(p, algo) || len(h) > sha256.Size*2 || !isHex(h) {
		return fmt.Errorf("%w: %q is no digest's prefix", ErrBadDigest, p)
	}
	return nil
}

func isHex(s string) bool {
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// HashFile returns the digest and size of the file at path.
func HashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return digestOf(h), n, nil
}

func digestOf(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

// verifier hashes what passes through it; check compares the sum.
type verifier struct {
	w io.Writer
	h hash.Hash
}

func newVerifier(w io.Writer) *verifier { return &verifier{w: w, h: sha256.New()} }

func (v *verifier) Write(p []byte) (int, error) {
	v.h.Write(p) // a hash never fails
	return v.w.Write(p)
}

func (v *verifier) check(digest string) error {
	if got := digestOf(v.h); got != digest {
		return fmt.Errorf("%w: blob %s holds bytes whose digest is %s", ErrDamaged, digest, got)
	}
	return nil
}

// GetFile places the blob of digest at dst with mode, atomically: the
// bytes go to a temporary file beside dst, which is renamed over dst only
// when they match the digest. A file at dst is replaced.
func GetFile(ctx context.Context, r Repository, digest, dst string, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".kiln-get-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	err = r.Get(ctx, digest, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
