package artifact

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Dir is a Repository in a local directory: blob sha256:HEX is the
// read-only file ROOT/blobs/sha256/HE/HEX (the cache's layout since it
// began, so a home's cached results stay valid), written through
// ROOT/tmp and renamed into place.
type Dir struct {
	root string
}

var _ Repository = (*Dir)(nil)

// NewDir returns the repository under root; root is created when needed.
func NewDir(root string) *Dir { return &Dir{root: root} }

// Root is the directory the repository keeps its files under.
func (d *Dir) Root() string { return d.root }

// Path is where the bytes of digest live (CheckDigest it first).
func (d *Dir) Path(digest string) string {
	h := strings.TrimPrefix(digest, "sha256:")
	return filepath.Join(d.root, "blobs", "sha256", h[:2], h)
}

// Put implements Repository.
func (d *Dir) Put(ctx context.Context, path string) (Blob, error) {
	src, err := os.Open(path)
	if err != nil {
		return Blob{}, err
	}
	defer src.Close()
	tmpDir := filepath.Join(d.root, "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return Blob{}, err
	}
	tmp, err := os.CreateTemp(tmpDir, "blob-*")
	if err != nil {
		return Blob{}, err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Blob{}, err
	}
	digest := digestOf(h)
	dst := d.Path(digest)
	if b, err := d.Stat(ctx, digest); err == nil {
		return b, nil // stored intact already
	}
	_ = os.RemoveAll(dst) // damaged, or absent: replaced below
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return Blob{}, err
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return Blob{}, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil && !errors.Is(err, os.ErrExist) {
		return Blob{}, err
	}
	fi, err := os.Stat(dst)
	if err != nil {
		return Blob{}, err
	}
	return Blob{Digest: digest, Size: n, ModTime: fi.ModTime()}, nil
}

// Get implements Repository.
func (d *Dir) Get(_ context.Context, digest string, w io.Writer) error {
	if err := CheckDigest(digest); err != nil {
		return err
	}
	f, err := os.Open(d.Path(digest))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: blob %s", ErrNotFound, digest)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	v := newVerifier(w)
	if _, err := io.Copy(v, f); err != nil {
		return err
	}
	return v.check(digest)
}

// Stat implements Repository: it hashes the file, so an altered blob is
// ErrDamaged.
func (d *Dir) Stat(_ context.Context, digest string) (Blob, error) {
	if err := CheckDigest(digest); err != nil {
		return Blob{}, err
	}
	path := d.Path(digest)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Blob{}, fmt.Errorf("%w: blob %s", ErrNotFound, digest)
	case err != nil:
		return Blob{}, err
	case !fi.Mode().IsRegular():
		return Blob{}, fmt.Errorf("%w: blob %s is not a regular file", ErrDamaged, digest)
	}
	got, n, err := HashFile(path)
	if err != nil {
		return Blob{}, fmt.Errorf("%w: %w", ErrDamaged, err)
	}
	if got != digest {
		return Blob{}, fmt.Errorf("%w: blob %s holds bytes whose digest is %s", ErrDamaged, digest, got)
	}
	return Blob{Digest: digest, Size: n, ModTime: fi.ModTime()}, nil
}

// List implements Repository. It does not hash: a blob is listed as its
// file is.
func (d *Dir) List(_ context.Context, prefix string) ([]Blob, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	var out []Blob
	root := filepath.Join(d.root, "blobs", "sha256")
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || e.IsDir() {
			return err
		}
		digest := "sha256:" + e.Name()
		if !isBlob(digest, prefix) {
			return nil
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		out = append(out, Blob{Digest: digest, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	slices.SortFunc(out, func(a, b Blob) int { return strings.Compare(a.Digest, b.Digest) })
	return out, err
}

// Delete implements Repository.
func (d *Dir) Delete(_ context.Context, digest string) error {
	if err := CheckDigest(digest); err != nil {
		return err
	}
	if err := os.RemoveAll(d.Path(digest)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// isBlob says whether a file named as digest is a blob List keeps: a
// well-formed digest that starts with prefix.
func isBlob(digest, prefix string) bool {
	return CheckDigest(digest) == nil && strings.HasPrefix(digest, prefix)
}
