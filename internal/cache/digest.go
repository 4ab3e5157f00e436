package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
)

// hashFile returns the digest of the file at path.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// Digest is the content digest of the file or directory at path, as an
// input of a cache key. Digests are remembered by path, size and
// modification time, so an artifact read by many tasks is read once.
func (c *Cache) Digest(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return c.digests.file(path, fi)
	}
	var files []apiv1.CachedFile
	err = artifact.WalkFiles(path, func(rel, p string, fi fs.FileInfo) error {
		d, err := c.digests.file(p, fi)
		files = append(files, apiv1.CachedFile{Path: rel, Digest: d, Size: fi.Size(), Mode: artifact.ModeOf(fi)})
		return err
	})
	if err != nil {
		return "", err
	}
	return artifact.ManifestDigest(files), nil
}

// digestMemo remembers file digests by path, size and modification time,
// except of files modified within racyWindow of being hashed.
type digestMemo struct {
	mu   sync.Mutex
	seen map[string]memoEntry
}

type memoEntry struct {
	size   int64
	mtime  time.Time
	digest string
}

// maxMemo bounds the memo; it is emptied when full.
const maxMemo = 4096

// racyWindow: a file modified less than this before it was hashed may be
// modified again without its modification time changing (file systems
// keep it in coarse steps), so its digest is not remembered (as Git does
// with racily clean files).
const racyWindow = 2 * time.Second

func newDigestMemo() *digestMemo { return &digestMemo{seen: map[string]memoEntry{}} }

func (m *digestMemo) file(path string, fi fs.FileInfo) (string, error) {
	m.mu.Lock()
	e, ok := m.seen[path]
	m.mu.Unlock()
	if ok && e.size == fi.Size() && e.mtime.Equal(fi.ModTime()) {
		return e.digest, nil
	}
	d, err := hashFile(path)
	if err != nil {
		return "", err
	}
	if time.Since(fi.ModTime()) < racyWindow {
		return d, nil
	}
	m.mu.Lock()
	if len(m.seen) >= maxMemo {
		clear(m.seen)
	}
	m.seen[path] = memoEntry{size: fi.Size(), mtime: fi.ModTime(), digest: d}
	m.mu.Unlock()
	return d, nil
}
