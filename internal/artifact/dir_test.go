package artifact_test

import (
	"errors"
	"os"
	"testing"

	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/artifact/artifacttest"
)

func TestDirConformance(t *testing.T) {
	t.Parallel()
	artifacttest.Run(t, func(t *testing.T) artifact.Repository { return artifact.NewDir(t.TempDir()) })
}

func TestDirStatFindsAlteredBytes(t *testing.T) {
	t.Parallel()
	d := artifact.NewDir(t.TempDir())
	p := t.TempDir() + "/f"
	if err := os.WriteFile(p, []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := d.Put(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	blob := d.Path(b.Digest)
	if err := os.Chmod(blob, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, []byte("WEIGHTS"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Stat(t.Context(), b.Digest); !errors.Is(err, artifact.ErrDamaged) {
		t.Fatalf("Stat of an altered blob = %v, want ErrDamaged", err)
	}
	if err := artifact.GetFile(t.Context(), d, b.Digest, t.TempDir()+"/x", 0o644); !errors.Is(err, artifact.ErrDamaged) {
		t.Fatalf("GetFile of an altered blob = %v, want ErrDamaged", err)
	}
	if _, err := d.Put(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Stat(t.Context(), b.Digest); err != nil {
		t.Fatalf("Stat after putting the bytes again = %v, want the blob repaired", err)
	}
}
