// Package artifacttest is the conformance suite every artifact.Repository
// passes (River's riverdrivertest pattern): each implementation's test is
// one call to Run.
package artifacttest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"kiln.dev/kiln/internal/artifact"
)

// Run runs the suite. newRepo returns a repository holding no blobs (its
// own directory, or its own prefix of a bucket) and arranges its cleanup.
func Run(t *testing.T, newRepo func(t *testing.T) artifact.Repository) {
	t.Helper()
	for name, test := range map[string]func(*testing.T, artifact.Repository){
		"put then get returns the same bytes":            putGet,
		"put of the same bytes twice keeps one blob":     putTwice,
		"stat and get of an absent blob are ErrNotFound": absent,
		"list by prefix":                         list,
		"delete removes and is idempotent":       deleteBlob,
		"bad digests are refused":                badDigest,
		"concurrent puts of one blob":            concurrentPuts,
		"an empty file is a blob":                emptyFile,
		"put beside the delete of the last blob": putBesideDelete,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, newRepo(t))
		})
	}
}

// write writes data to a new file and returns its path.
func write(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func digest(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

func put(t *testing.T, r artifact.Repository, data []byte) artifact.Blob {
	t.Helper()
	b, err := r.Put(t.Context(), write(t, data))
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if b.Digest != digest(data) || b.Size != int64(len(data)) {
		t.Fatalf("Put = %+v, want digest %s and size %d", b, digest(data), len(data))
	}
	return b
}

func putGet(t *testing.T, r artifact.Repository) {
	data := bytes.Repeat([]byte("weights "), 70_000) // over one S3 part of the client? no: a few hundred KiB
	b := put(t, r, data)
	var got bytes.Buffer
	if err := r.Get(t.Context(), b.Digest, &got); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("Get returned %d bytes, not the %d put", got.Len(), len(data))
	}
	st, err := r.Stat(t.Context(), b.Digest)
	if err != nil || st.Size != int64(len(data)) || st.ModTime.IsZero() {
		t.Fatalf("Stat = %+v, %v; want size %d and a time", st, err, len(data))
	}
	dst := filepath.Join(t.TempDir(), "a", "b", "model.bin")
	if err := artifact.GetFile(t.Context(), r, b.Digest, dst, 0o444); err != nil {
		t.Fatalf("GetFile: %v", err)
	}
	if fb, err := os.ReadFile(dst); err != nil || !bytes.Equal(fb, data) {
		t.Fatalf("GetFile placed %d bytes (%v), want the %d put", len(fb), err, len(data))
	}
}

func putTwice(t *testing.T, r artifact.Repository) {
	data := []byte("same bytes")
	put(t, r, data)
	put(t, r, data)
	all, err := r.List(t.Context(), "")
	if err != nil || len(all) != 1 || all[0].Digest != digest(data) {
		t.Fatalf("List after two puts of one file = %+v, %v; want one blob", all, err)
	}
}

func absent(t *testing.T, r artifact.Repository) {
	d := digest([]byte("never stored"))
	if _, err := r.Stat(t.Context(), d); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Stat of an absent blob = %v, want ErrNotFound", err)
	}
	if err := r.Get(t.Context(), d, &bytes.Buffer{}); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("Get of an absent blob = %v, want ErrNotFound", err)
	}
	dst := filepath.Join(t.TempDir(), "x")
	if err := artifact.GetFile(t.Context(), r, d, dst, 0o644); !errors.Is(err, artifact.ErrNotFound) {
		t.Errorf("GetFile of an absent blob = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("GetFile of an absent blob left a file: %v", err)
	}
}

func list(t *testing.T, r artifact.Repository) {
	var want []string
	for i := range 6 {
		want = append(want, put(t, r, []byte{byte(i), 'x'}).Digest)
	}
	slices.Sort(want)
	all, err := r.List(t.Context(), "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var got []string
	for _, b := range all {
		got = append(got, b.Digest)
		if b.Size != 2 {
			t.Errorf("List: %s has size %d, want 2", b.Digest, b.Size)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List(\"\") = %v, want %v", got, want)
	}
	pre := want[2][:len("sha256:")+1]
	some, err := r.List(t.Context(), pre)
	if err != nil {
		t.Fatalf("List(%q): %v", pre, err)
	}
	n := 0
	for _, d := range want {
		if d[:len(pre)] == pre {
			n++
		}
	}
	if len(some) != n || n == 0 {
		t.Fatalf("List(%q) = %d blobs, want %d", pre, len(some), n)
	}
	for _, b := range some {
		if b.Digest[:len(pre)] != pre {
			t.Errorf("List(%q) returned %s", pre, b.Digest)
		}
	}
}

func deleteBlob(t *testing.T, r artifact.Repository) {
	b := put(t, r, []byte("to delete"))
	keep := put(t, r, []byte("to keep"))
	for range 2 {
		if err := r.Delete(t.Context(), b.Digest); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if _, err := r.Stat(t.Context(), b.Digest); !errors.Is(err, artifact.ErrNotFound) {
		t.Fatalf("Stat after Delete = %v, want ErrNotFound", err)
	}
	if _, err := r.Stat(t.Context(), keep.Digest); err != nil {
		t.Fatalf("Stat of another blob after Delete: %v", err)
	}
}

func badDigest(t *testing.T, r artifact.Repository) {
	for _, d := range []string{"", "sha256:", "sha256:../../etc/passwd", "md5:0123", "sha256:" + string(bytes.Repeat([]byte("A"), 64))} {
		if _, err := r.Stat(t.Context(), d); !errors.Is(err, artifact.ErrBadDigest) {
			t.Errorf("Stat(%q) = %v, want ErrBadDigest", d, err)
		}
		if err := r.Get(t.Context(), d, &bytes.Buffer{}); !errors.Is(err, artifact.ErrBadDigest) {
			t.Errorf("Get(%q) = %v, want ErrBadDigest", d, err)
		}
		if err := r.Delete(t.Context(), d); !errors.Is(err, artifact.ErrBadDigest) {
			t.Errorf("Delete(%q) = %v, want ErrBadDigest", d, err)
		}
	}
	if _, err := r.List(t.Context(), "sha256:../"); !errors.Is(err, artifact.ErrBadDigest) {
		t.Errorf("List(\"sha256:../\") = %v, want ErrBadDigest", err)
	}
}

func concurrentPuts(t *testing.T, r artifact.Repository) {
	data := bytes.Repeat([]byte("concurrent"), 10_000)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		p := write(t, data)
		wg.Go(func() {
			_, err := r.Put(t.Context(), p)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent Put: %v", err)
		}
	}
	var got bytes.Buffer
	if err := r.Get(t.Context(), digest(data), &got); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("Get after concurrent puts: %v (%d bytes)", err, got.Len())
	}
}

func emptyFile(t *testing.T, r artifact.Repository) {
	b := put(t, r, nil)
	var got bytes.Buffer
	if err := r.Get(t.Context(), b.Digest, &got); err != nil || got.Len() != 0 {
		t.Fatalf("Get of the empty blob: %v, %d bytes", err, got.Len())
	}
}

// putBesideDelete puts a blob while the repository's only other blob is
// deleted, many times: a put must not fail because a delete emptied the
// place blobs are kept (gateways that keep objects as files remove
// emptied directories).
func putBesideDelete(t *testing.T, r artifact.Repository) {
	for i := range 30 {
		gone := put(t, r, []byte{'g', byte(i)})
		p := write(t, []byte{'k', byte(i)})
		var wg sync.WaitGroup
		var putErr, delErr error
		wg.Go(func() { _, putErr = r.Put(t.Context(), p) })
		wg.Go(func() { delErr = r.Delete(t.Context(), gone.Digest) })
		wg.Wait()
		if putErr != nil || delErr != nil {
			t.Fatalf("round %d: Put beside Delete = %v, Delete = %v; want both to succeed", i, putErr, delErr)
		}
		kept := digest([]byte{'k', byte(i)})
		if _, err := r.Stat(t.Context(), kept); err != nil {
			t.Fatalf("round %d: Stat of the blob put beside a Delete: %v", i, err)
		}
		if err := r.Delete(t.Context(), kept); err != nil {
			t.Fatalf("round %d: Delete: %v", i, err)
		}
	}
}
