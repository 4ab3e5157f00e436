package sqlite

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/storetest"
)

func TestEmptiedStoreIsRefusedNotReplaced(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err = Open(t.Context(), path, Options{})
	var e *apiv1.Error
	if apiv1.CodeOf(err) != apiv1.CodeStoreCorrupt || !asError(err, &e) || e.File != path || !strings.Contains(e.Message, "empty") {
		t.Fatalf("Open(emptied) = %v, want %s naming %s and saying it is empty", err, apiv1.CodeStoreCorrupt, path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("the emptied file was written to: %v, %v", fi, err)
	}
}

func TestNewStoreIsPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateRun(t.Context(), storetest.NewRun("r1", "")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".kiln-store-*"))
	if len(left) > 0 {
		t.Errorf("creating the store left %v behind", left)
	}
}

// TestDamagedPagesAreCoded overwrites the pages after the schema with
// garbage, as a failing disk would, and expects the store's answers to say
// that the file is damaged, and which file.
func TestDamagedPagesAreCoded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := s.CreateRun(t.Context(), storetest.NewRun(apiv1.RunID(fmt.Sprintf("run-%03d", i)), "")); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	for i := 2 * page; i < len(b); i++ {
		b[i] = byte(i*7 + 13)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path, Options{})
	if err == nil {
		defer s.Close()
		_, err = s.ListRuns(t.Context(), store.ListRunsParams{Limit: 500})
		if err == nil {
			_, err = s.GetRun(t.Context(), "run-150")
		}
	}
	var e *apiv1.Error
	if apiv1.CodeOf(err) != apiv1.CodeStoreCorrupt || !asError(err, &e) || e.File != path {
		t.Fatalf("reading damaged pages: %v, want %s naming %s", err, apiv1.CodeStoreCorrupt, path)
	}
}

// TestFullDiskIsCodedAndPasses fills a small tmpfs under the store and
// expects a coded error with the path and the free space, and writes to
// work again once space is freed.
func TestFullDiskIsCodedAndPasses(t *testing.T) {
	t.Parallel()
	dir := smallDisk(t, "2m")
	path := filepath.Join(dir, "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	var werr error
	for i := 0; i < 2000 && werr == nil; i++ {
		p := storetest.NewRun(apiv1.RunID(fmt.Sprintf("run-%04d", i)), "")
		p.Run.Params["p"] = strings.Repeat("x", 4000)
		werr = s.CreateRun(t.Context(), p)
	}
	var e *apiv1.Error
	if apiv1.CodeOf(werr) != apiv1.CodeStoreFull || !asError(werr, &e) || e.File != path || !strings.Contains(e.Message, "bytes free") {
		t.Fatalf("writing on a full disk: %v, want %s naming %s with the free space", werr, apiv1.CodeStoreFull, path)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(t.Context(), storetest.NewRun("after", "")); err != nil {
		t.Fatalf("writing after space was freed: %v", err)
	}
	if _, err := s.GetRun(t.Context(), "after"); err != nil {
		t.Fatal(err)
	}
}

// smallDisk mounts a tmpfs of size on a fresh directory, or skips the test
// where the machine does not allow it.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes to path until its disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			return
		}
	}
}

func asError(err error, e **apiv1.Error) bool {
	return errors.As(err, e)
}
