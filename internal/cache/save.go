package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Save stores e, whose outputs are set and whose artifacts are listed by
// name and path only, reading the artifacts' bytes from under outDir. It
// fills in their digests and sizes. Then, if the cache is over its size,
// it removes the least recently used entries.
func (c *Cache) Save(ctx context.Context, e *apiv1.CacheEntry, outDir string) error {
	e.Size = 0
	for k := range e.Artifacts {
		a := &e.Artifacts[k]
		if err := c.putArtifact(a, filepath.Join(outDir, filepath.FromSlash(a.Path))); err != nil {
			return fmt.Errorf("storing artifact %s: %w", a.Name, err)
		}
		e.Size += a.Size
	}
	if c.maxSize > 0 && e.Size > c.maxSize {
		return fmt.Errorf("its artifacts (%d bytes) are larger than the whole cache may hold (--cache-max-size, %d bytes)", e.Size, c.maxSize)
	}
	if err := c.store.PutCacheEntry(ctx, e); err != nil {
		return fmt.Errorf("storing a cache entry: %w", err)
	}
	if c.maxSize > 0 {
		if _, err := c.Prune(ctx, PruneParams{MaxSize: c.maxSize}); err != nil {
			c.log.Warn("keeping the cache under its size", "err", err)
		}
	}
	return nil
}

// putArtifact stores the file or directory at path as a.
func (c *Cache) putArtifact(a *apiv1.CachedArtifact, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		a.Digest, a.Size, err = c.putBlob(path)
		a.Files, a.Dir, a.Mode = nil, false, modeOf(fi)
		return err
	}
	a.Files, a.Dir, a.Mode, a.Size = []apiv1.CachedFile{}, true, 0, 0
	err = walkFiles(path, func(rel, p string, fi fs.FileInfo) error {
		d, n, err := c.putBlob(p)
		a.Files = append(a.Files, apiv1.CachedFile{Path: rel, Digest: d, Size: n, Mode: modeOf(fi)})
		a.Size += n
		return err
	})
	a.Digest = manifestDigest(a.Files)
	return err
}

// putBlob copies the file at path into the blobs, hashing it on the way,
// and returns its digest and size. A blob already stored is kept.
func (c *Cache) putBlob(path string) (string, int64, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer src.Close()
	tmpDir := filepath.Join(c.dir, "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return "", 0, err
	}
	tmp, err := os.CreateTemp(tmpDir, "blob-*")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	digest := "sha256:" + hex.EncodeToString(h.Sum(nil))
	dst := c.blobPath(digest)
	if fi, err := os.Lstat(dst); err == nil {
		if got, err := hashFile(dst); err == nil && got == digest && fi.Mode().IsRegular() {
			return digest, n, nil
		}
		_ = os.RemoveAll(dst) // damaged: replaced below
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", 0, err
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return "", 0, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil && !errors.Is(err, os.ErrExist) {
		return "", 0, err
	}
	return digest, n, nil
}

// Materialize places e's artifacts under dir, at their paths, for the
// tasks that read them, as copies of the blobs.
func (c *Cache) Materialize(e *apiv1.CacheEntry, dir string) error {
	for _, a := range e.Artifacts {
		base := filepath.Join(dir, filepath.FromSlash(a.Path))
		if !isDir(a) {
			if err := c.place(a.Digest, base, fileMode(a.Mode)); err != nil {
				return fmt.Errorf("placing artifact %s: %w", a.Name, err)
			}
			continue
		}
		if err := os.MkdirAll(base, 0o755); err != nil {
			return err
		}
		for _, f := range a.Files {
			if err := c.place(f.Digest, filepath.Join(base, filepath.FromSlash(f.Path)), fs.FileMode(f.Mode)); err != nil {
				return fmt.Errorf("placing artifact %s: %w", a.Name, err)
			}
		}
	}
	return nil
}

// fileMode is the mode a file artifact is placed with: read-only unless
// it was stored executable.
func fileMode(stored uint32) fs.FileMode {
	if stored&0o111 != 0 {
		return fs.FileMode(stored).Perm()
	}
	return 0o444
}

// place copies the blob of digest to dst, with mode. A copy, not a link:
// a task that alters what it reads must not alter the cache, nor other
// runs' copies.
func (c *Cache) place(digest, dst string, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	_ = os.Remove(dst) // placed before by an engine that stopped midway
	in, err := os.Open(c.blobPath(digest))
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode|0o400)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
