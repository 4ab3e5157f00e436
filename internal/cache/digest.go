package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
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

// manifestDigest is the digest of a directory: of its files' paths,
// digests and modes, in order.
func manifestDigest(files []apiv1.CachedFile) string {
	b, _ := json.Marshal(files) // strings and numbers always encode
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// walkFiles lists the regular files under dir, by relative slash path.
// Anything else (a link, a device) is an error: a cached result must be
// bytes kiln can store.
func walkFiles(dir string, each func(rel, path string, fi fs.FileInfo) error) error {
	var rels []string
	paths := map[string]string{}
	infos := map[string]fs.FileInfo{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		rels, paths[rel], infos[rel] = append(rels, rel), path, fi
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(rels)
	for _, rel := range rels {
		if err := each(rel, paths[rel], infos[rel]); err != nil {
			return err
		}
	}
	return nil
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
	err = walkFiles(path, func(rel, p string, fi fs.FileInfo) error {
		d, err := c.digests.file(p, fi)
		files = append(files, apiv1.CachedFile{Path: rel, Digest: d, Size: fi.Size(), Mode: modeOf(fi)})
		return err
	})
	if err != nil {
		return "", err
	}
	return manifestDigest(files), nil
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

// modeOf is the mode a cached file keeps: executable or not. Other bits
// (who may write it) do not change what a task reads.
func modeOf(fi fs.FileInfo) uint32 {
	if fi.Mode().Perm()&0o111 != 0 {
		return 0o755
	}
	return 0o644
}
