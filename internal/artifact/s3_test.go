package artifact_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/artifact/artifacttest"
)

// The suite against a real S3-compatible server (hack/s3-up.sh).
func TestS3Conformance(t *testing.T) {
	t.Parallel()
	artifacttest.Run(t, func(t *testing.T) artifact.Repository { return artifacttest.NewS3(t) })
}

// An object replaced behind kiln's back is found when it is read.
func TestS3GetFindsAlteredBytes(t *testing.T) {
	t.Parallel()
	c := artifacttest.S3Config(t)
	r, err := artifact.NewS3(c)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := r.Put(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := minio.New(c.Endpoint[len("http://"):], &minio.Options{Creds: credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	key := c.Prefix + "sha256/" + b.Digest[len("sha256:"):]
	if _, err := raw.PutObject(t.Context(), c.Bucket, key, bytes.NewReader([]byte("WEIGHTS")), 7, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Get(t.Context(), b.Digest, &bytes.Buffer{}); !errors.Is(err, artifact.ErrDamaged) {
		t.Fatalf("Get of an altered object = %v, want ErrDamaged", err)
	}
}

// A wrong secret key is an error that never shows the key.
func TestS3WrongCredentials(t *testing.T) {
	t.Parallel()
	c := artifacttest.S3Config(t)
	c.SecretKey = "not-the-secret-key-12345"
	r, err := artifact.NewS3(c)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Check(t.Context())
	if err == nil {
		t.Fatal("Check with a wrong secret key succeeded")
	}
	if bytes.Contains([]byte(err.Error()+c.String()), []byte(c.SecretKey)) {
		t.Fatalf("the error or the description shows the secret key: %v / %s", err, c)
	}
}
