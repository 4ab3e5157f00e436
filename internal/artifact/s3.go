package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config locates a bucket of an S3-compatible store. Its String never
// shows the secret key.
type S3Config struct {
	// Endpoint is host[:port], or a URL whose scheme (http or https)
	// also decides Insecure. Required.
	Endpoint string
	// Bucket holds the blobs; it must exist. Required.
	Bucket string
	// Prefix is put before every key (e.g. "kiln/"); default none.
	Prefix string
	// Region is the bucket's region; default the store's (us-east-1).
	Region string
	// AccessKey and SecretKey sign the requests; both empty means
	// anonymous requests.
	AccessKey, SecretKey string
	// Insecure speaks plain HTTP instead of HTTPS.
	Insecure bool
}

// String describes c without its secret key.
func (c S3Config) String() string {
	u := c.Endpoint
	if !strings.Contains(u, "://") {
		u = map[bool]string{false: "https://", true: "http://"}[c.Insecure] + u
	}
	return fmt.Sprintf("s3 %s/%s/%s", u, c.Bucket, c.Prefix)
}

// S3 is a Repository in a bucket of an S3-compatible store: blob
// sha256:HEX is the object PREFIX + "sha256/" + HEX. Objects are only
// ever written whole, so a reader never sees part of one.
type S3 struct {
	cfg    S3Config
	c      *minio.Client
	bucket string
	prefix string
}

var _ Repository = (*S3)(nil)

// NewS3 returns the repository c describes. It does not reach the store:
// the first request does (see Check).
func NewS3(c S3Config) (*S3, error) {
	endpoint, insecure := c.Endpoint, c.Insecure
	if u, err := url.Parse(endpoint); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		endpoint, insecure = u.Host, u.Scheme == "http"
	}
	if endpoint == "" || c.Bucket == "" {
		return nil, errors.New("artifact: an S3 repository needs an endpoint and a bucket")
	}
	var creds *credentials.Credentials
	if c.AccessKey != "" || c.SecretKey != "" {
		creds = credentials.NewStaticV4(c.AccessKey, c.SecretKey, "")
	} else {
		creds = credentials.New(&credentials.Static{}) // anonymous
	}
	cl, err := minio.New(endpoint, &minio.Options{Creds: creds, Secure: !insecure, Region: c.Region})
	if err != nil {
		return nil, fmt.Errorf("artifact: %s: %w", c, err)
	}
	return &S3{cfg: c, c: cl, bucket: c.Bucket, prefix: c.Prefix}, nil
}

// S3Configured is a repository in a bucket that can say where it is.
type S3Configured interface {
	// S3Config is the bucket's configuration, keys included, for handing
	// to a process that reaches the same bucket (a pod's wrapper).
	S3Config(ctx context.Context) (S3Config, error)
}

var _ S3Configured = (*S3)(nil)

// S3Config implements S3Configured: the configuration s was made from.
func (s *S3) S3Config(context.Context) (S3Config, error) { return s.cfg, nil }

// Check reaches the store and says whether the bucket is there.
func (s *S3) Check(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	switch {
	case err != nil:
		return fmt.Errorf("reaching bucket %s: %w", s.bucket, err)
	case !ok:
		return fmt.Errorf("bucket %s does not exist", s.bucket)
	}
	return nil
}

// key is the object name of digest (CheckDigest it first).
func (s *S3) key(digest string) string {
	return s.prefix + "sha256/" + strings.TrimPrefix(digest, "sha256:")
}

// Put implements Repository: the file is hashed first, and uploaded only
// when no object of that size is stored under its digest.
func (s *S3) Put(ctx context.Context, path string) (Blob, error) {
	digest, n, err := HashFile(path)
	if err != nil {
		return Blob{}, err
	}
	if b, err := s.Stat(ctx, digest); err == nil && b.Size == n {
		return b, nil
	}
	err = s.upload(ctx, path, digest, n)
	for try := 1; raced(err) && try < putTries; try++ {
		err = s.upload(ctx, path, digest, n)
	}
	if err != nil {
		return Blob{}, err
	}
	return s.Stat(ctx, digest)
}

// putTries bounds the uploads of one Put that race with deletes.
const putTries = 4

// upload sends the file at path as the object of digest, and checks the
// bytes sent were the bytes hashed.
func (s *S3) upload(ctx context.Context, path, digest string, n int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	v := newVerifier(io.Discard)
	_, err = s.c.PutObject(ctx, s.bucket, s.key(digest), io.TeeReader(f, v), n,
		minio.PutObjectOptions{ContentType: "application/octet-stream", SendContentMd5: true})
	if err != nil {
		return fmt.Errorf("uploading %s: %w", digest, err)
	}
	if err := v.check(digest); err != nil { // the file changed while it was read
		_ = s.Delete(ctx, digest)
		return fmt.Errorf("%s changed while it was uploaded: %w", path, err)
	}
	return nil
}

// raced reports whether an upload failed only because it met a delete:
// gateways that keep objects as files (versitygw's posix backend) remove
// a directory its last object leaves, and answer a put that was creating a
// file in it "ExistingObjectIsDirectory". A blob's key is never a
// directory, so that answer always means the race, and the put is retried.
func raced(err error) bool {
	var resp minio.ErrorResponse
	return errors.As(err, &resp) && resp.Code == "ExistingObjectIsDirectory"
}

// Get implements Repository.
func (s *S3) Get(ctx context.Context, digest string, w io.Writer) error {
	if err := CheckDigest(digest); err != nil {
		return err
	}
	o, err := s.c.GetObject(ctx, s.bucket, s.key(digest), minio.GetObjectOptions{})
	if err != nil {
		return s.wrap(digest, err)
	}
	defer o.Close()
	v := newVerifier(w)
	if _, err := io.Copy(v, o); err != nil {
		return s.wrap(digest, err)
	}
	return v.check(digest)
}

// Stat implements Repository: it checks the object is there, not its bytes.
func (s *S3) Stat(ctx context.Context, digest string) (Blob, error) {
	if err := CheckDigest(digest); err != nil {
		return Blob{}, err
	}
	oi, err := s.c.StatObject(ctx, s.bucket, s.key(digest), minio.StatObjectOptions{})
	if err != nil {
		return Blob{}, s.wrap(digest, err)
	}
	return Blob{Digest: digest, Size: oi.Size, ModTime: oi.LastModified}, nil
}

// List implements Repository.
func (s *S3) List(ctx context.Context, prefix string) ([]Blob, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	p := s.prefix + "sha256/" + strings.TrimPrefix(strings.TrimPrefix(prefix, "sha256"), ":")
	var out []Blob
	for oi := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: p, Recursive: true}) {
		if oi.Err != nil {
			return nil, fmt.Errorf("listing %s: %w", p, oi.Err)
		}
		digest := "sha256:" + strings.TrimPrefix(oi.Key, s.prefix+"sha256/")
		if CheckDigest(digest) != nil {
			continue // not a blob kiln wrote
		}
		out = append(out, Blob{Digest: digest, Size: oi.Size, ModTime: oi.LastModified})
	}
	slices.SortFunc(out, func(a, b Blob) int { return strings.Compare(a.Digest, b.Digest) })
	return out, nil
}

// Delete implements Repository.
func (s *S3) Delete(ctx context.Context, digest string) error {
	if err := CheckDigest(digest); err != nil {
		return err
	}
	if err := s.c.RemoveObject(ctx, s.bucket, s.key(digest), minio.RemoveObjectOptions{}); err != nil {
		if err := s.wrap(digest, err); !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	return nil
}

// wrap turns the store's "no such key" into ErrNotFound.
func (s *S3) wrap(digest string, err error) error {
	switch minio.ToErrorResponse(err).Code {
	case minio.NoSuchKey, "NotFound":
		return fmt.Errorf("%w: blob %s", ErrNotFound, digest)
	}
	return fmt.Errorf("s3 bucket %s, blob %s: %w", s.bucket, digest, err)
}
