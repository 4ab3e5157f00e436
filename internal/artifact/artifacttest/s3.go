package artifacttest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln.dev/kiln/internal/artifact"
)

// S3Config returns the test S3 server's configuration, from the KILN_S3_*
// variables or else the file hack/s3-up.sh writes (.k8s/s3.env at the
// repository's root, found from the working directory up), with a prefix
// of its own for this test; the test's objects are deleted when it ends.
// Without a server the test is skipped, or fails when KILN_REQUIRE_S3=1.
func S3Config(t *testing.T) artifact.S3Config {
	t.Helper()
	vars := s3Vars()
	if vars["KILN_S3_ENDPOINT"] == "" {
		if os.Getenv("KILN_REQUIRE_S3") == "1" {
			t.Fatal("KILN_REQUIRE_S3=1 but no S3 server is configured: run hack/s3-up.sh (make k8s-up), or set KILN_S3_ENDPOINT")
		}
		t.Skip("no S3 server: run hack/s3-up.sh (make k8s-up), or set KILN_S3_ENDPOINT")
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails
	c := artifact.S3Config{
		Endpoint: vars["KILN_S3_ENDPOINT"], Bucket: vars["KILN_S3_BUCKET"], Region: vars["KILN_S3_REGION"],
		AccessKey: vars["KILN_S3_ACCESS_KEY"], SecretKey: vars["KILN_S3_SECRET_KEY"],
		Prefix: "test/" + hex.EncodeToString(b[:]) + "/",
	}
	t.Cleanup(func() { cleanPrefix(t, c) })
	return c
}

// NewS3 is S3Config's repository.
func NewS3(t *testing.T) *artifact.S3 {
	t.Helper()
	r, err := artifact.NewS3(S3Config(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(t.Context()); err != nil {
		t.Fatalf("the test S3 server: %v", err)
	}
	return r
}

// cleanPrefix deletes the blobs of a test's prefix.
func cleanPrefix(t *testing.T, c artifact.S3Config) {
	r, err := artifact.NewS3(c)
	if err != nil {
		return
	}
	ctx := context.WithoutCancel(t.Context()) // cancelled before Cleanup runs
	blobs, err := r.List(ctx, "")
	if err != nil {
		t.Logf("cleaning the test's S3 prefix: %v", err)
		return
	}
	for _, b := range blobs {
		_ = r.Delete(ctx, b.Digest)
	}
}

// s3Vars reads the KILN_S3_* variables: the environment's, else the file's.
func s3Vars() map[string]string {
	vars := map[string]string{}
	for _, k := range []string{"KILN_S3_ENDPOINT", "KILN_S3_ACCESS_KEY", "KILN_S3_SECRET_KEY", "KILN_S3_BUCKET", "KILN_S3_REGION"} {
		if v := os.Getenv(k); v != "" {
			vars[k] = v
		}
	}
	if vars["KILN_S3_ENDPOINT"] != "" {
		return vars
	}
	f, err := os.Open(envFile())
	if err != nil {
		return vars
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vars[k] = v
		}
	}
	return vars
}

// envFile is KILN_S3_ENV, or .k8s/s3.env beside the nearest go.mod above
// the working directory.
func envFile() string {
	if p := os.Getenv("KILN_S3_ENV"); p != "" {
		return p
	}
	dir, _ := os.Getwd()
	for dir != filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".k8s", "s3.env")
		}
		dir = filepath.Dir(dir)
	}
	return ""
}
