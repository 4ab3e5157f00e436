package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Upload stores the file or directory at path as artifact a, whose Name
// and Path are set: each file is a blob, and a's Digest, Size, Mode, Dir
// and Files are filled in (a directory's digest is its manifest's, see
// ManifestDigest).
func Upload(ctx context.Context, r Repository, a *apiv1.CachedArtifact, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		b, err := r.Put(ctx, path)
		a.Digest, a.Size, a.Files, a.Dir, a.Mode = b.Digest, b.Size, nil, false, ModeOf(fi)
		return err
	}
	a.Files, a.Dir, a.Mode, a.Size = []apiv1.CachedFile{}, true, 0, 0
	err = WalkFiles(path, func(rel, p string, fi fs.FileInfo) error {
		b, err := r.Put(ctx, p)
		a.Files = append(a.Files, apiv1.CachedFile{Path: rel, Digest: b.Digest, Size: b.Size, Mode: ModeOf(fi)})
		a.Size += b.Size
		return err
	})
	a.Digest = ManifestDigest(a.Files)
	return err
}

// Download places artifact a at dst (a file, or a directory with a's
// files), as copies of the blobs checked against their digests. Files
// are read-only unless stored executable.
func Download(ctx context.Context, r Repository, a apiv1.CachedArtifact, dst string) error {
	if !IsDir(a) {
		return GetFile(ctx, r, a.Digest, dst, fileMode(a.Mode))
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range a.Files {
		if err := GetFile(ctx, r, f.Digest, filepath.Join(dst, filepath.FromSlash(f.Path)), fs.FileMode(f.Mode)|0o400); err != nil {
			return err
		}
	}
	return nil
}

// IsDir says whether a is a directory artifact.
func IsDir(a apiv1.CachedArtifact) bool { return a.Dir || a.Files != nil }

// Files lists an artifact's blobs: itself, or a directory's files.
func Files(a apiv1.CachedArtifact) []apiv1.CachedFile {
	if !IsDir(a) {
		return []apiv1.CachedFile{{Path: "", Digest: a.Digest, Size: a.Size, Mode: a.Mode}}
	}
	return a.Files
}

// fileMode is the mode a file artifact is placed with: read-only unless
// it was stored executable.
func fileMode(stored uint32) fs.FileMode {
	if stored&0o111 != 0 {
		return fs.FileMode(stored).Perm() | 0o400
	}
	return 0o444
}

// ManifestDigest is the digest of a directory: of its files' paths,
// digests and modes, in order.
func ManifestDigest(files []apiv1.CachedFile) string {
	b, _ := json.Marshal(files) // strings and numbers always encode
	h := sha256.New()
	h.Write(b)
	return digestOf(h)
}

// ModeOf is the mode a stored file keeps: executable or not. Other bits
// (who may write it) do not change what a task reads.
func ModeOf(fi fs.FileInfo) uint32 {
	if fi.Mode().Perm()&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// WalkFiles lists the regular files under dir, by relative slash path,
// in order. Anything else (a link, a device) is an error: an artifact
// must be bytes kiln can store.
func WalkFiles(dir string, each func(rel, path string, fi fs.FileInfo) error) error {
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
	slices.Sort(rels)
	for _, rel := range rels {
		if err := each(rel, paths[rel], infos[rel]); err != nil {
			return err
		}
	}
	return nil
}
