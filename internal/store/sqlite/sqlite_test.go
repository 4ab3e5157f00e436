package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/store"
	"kiln.dev/kiln/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "kiln.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestOpenCorruptFileIsACodedError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	if err := os.WriteFile(path, []byte("this is not a database, just text long enough to have a header"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path, Options{})
	if got := apiv1.CodeOf(err); got != apiv1.CodeStoreCorrupt {
		t.Fatalf("Open(corrupt) = %v, want code %s", err, apiv1.CodeStoreCorrupt)
	}
}

func TestOpenUnwritableDirectoryIsACodedError(t *testing.T) {
	t.Parallel()
	_, err := Open(context.Background(), "/proc/kiln-cannot-write-here/kiln.db", Options{})
	if got := apiv1.CodeOf(err); got != apiv1.CodeStoreOpen {
		t.Fatalf("Open(unwritable) = %v, want code %s", err, apiv1.CodeStoreOpen)
	}
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "kiln.db")
	s, err := Open(t.Context(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(t.Context(), storetest.NewRun("r1", "")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(t.Context(), path, Options{FullSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.GetRun(t.Context(), "r1"); err != nil {
		t.Fatalf("GetRun after reopen: %v", err)
	}
}

func TestReplicas(t *testing.T) {
	t.Parallel()
	storetest.RunReplicas(t, func(t *testing.T, n int) []store.Store {
		path := filepath.Join(t.TempDir(), "kiln.db")
		var stores []store.Store
		for range n {
			s, err := Open(t.Context(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			stores = append(stores, s)
		}
		return stores
	})
}
