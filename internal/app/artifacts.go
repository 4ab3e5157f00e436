package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/store"
)

// Artifacts chooses the artifact repository that holds the cache's bytes
// and, when S3 is set, every task's output artifacts.
type Artifacts struct {
	// S3, if set, is the bucket; its AccessKey and SecretKey are filled in
	// from Secret, else from KILN_S3_ACCESS_KEY and KILN_S3_SECRET_KEY.
	// nil keeps the bytes under Home/cache (artifact.Dir) and uploads no
	// task artifacts.
	S3 *artifact.S3Config
	// Secret names the kiln secret of project "default" whose value is
	// ACCESS_KEY:SECRET_KEY.
	Secret string
	// File is the configuration file the settings came from, for errors.
	File string
}

// ArtifactSecretProject is the project whose secret holds the S3 credentials.
const ArtifactSecretProject = "default"

// openArtifacts returns the repositories cfg names: the cache's, and the
// tasks' output artifacts' (nil without S3: they stay in the attempts'
// output directories). In a bucket they are two prefixes, PREFIX/cache/
// and PREFIX/artifacts/, because pruning the cache deletes the blobs no
// cache entry names. An S3 repository is reached on first use, not here:
// commands that never touch artifacts (kiln secret set, which may be what
// stores its credentials) work while the store is unreachable or the
// secret is missing.
func openArtifacts(home string, st store.Secrets, cfg Artifacts) (cacheRepo, tasks artifact.Repository) {
	if cfg.S3 == nil {
		return artifact.NewDir(filepath.Join(home, "cache")), nil
	}
	sub := func(p string) *lazyS3 {
		c := cfg
		s3 := *cfg.S3
		s3.Prefix += p
		c.S3 = &s3
		return &lazyS3{cfg: c, secrets: st}
	}
	return sub("cache/"), sub("artifacts/")
}

// lazyS3 is an S3 repository opened, with its credentials and a check of
// the bucket, on first use; a failure is answered to every later call,
// coded, until a call succeeds in opening it.
type lazyS3 struct {
	cfg     Artifacts
	secrets store.Secrets

	mu   sync.Mutex
	repo *artifact.S3
}

var _ artifact.Repository = (*lazyS3)(nil)

func (l *lazyS3) open(ctx context.Context) (*artifact.S3, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.repo != nil {
		return l.repo, nil
	}
	c := *l.cfg.S3
	if err := l.credentials(ctx, &c); err != nil {
		return nil, err
	}
	r, err := artifact.NewS3(c)
	if err == nil {
		err = r.Check(ctx)
	}
	if err != nil {
		return nil, &apiv1.Error{
			Code: apiv1.CodeArtifactRepository, File: l.cfg.File, Field: "artifacts.s3",
			Message: fmt.Sprintf("the artifact repository %s: %v", c, err),
		}
	}
	l.repo = r
	return r, nil
}

// credentials fills in c's keys from the secret, or the environment.
func (l *lazyS3) credentials(ctx context.Context, c *artifact.S3Config) error {
	if l.cfg.Secret == "" {
		c.AccessKey, c.SecretKey = os.Getenv("KILN_S3_ACCESS_KEY"), os.Getenv("KILN_S3_SECRET_KEY")
		return nil
	}
	bad := func(msg string) error {
		return &apiv1.Error{Code: apiv1.CodeArtifactCredentials, File: l.cfg.File, Field: "artifacts.s3.secret", Message: msg}
	}
	v, err := l.secrets.Secret(ctx, ArtifactSecretProject, l.cfg.Secret)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return bad(fmt.Sprintf("project %q has no secret %q", ArtifactSecretProject, l.cfg.Secret))
	case err != nil:
		return bad(fmt.Sprintf("reading secret %q: %v", l.cfg.Secret, err))
	}
	ak, sk, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok || ak == "" || sk == "" {
		return bad(fmt.Sprintf("secret %q is not ACCESS_KEY:SECRET_KEY", l.cfg.Secret)) // never its value
	}
	c.AccessKey, c.SecretKey = ak, sk
	return nil
}

// S3Config implements artifact.S3Configured, opening the bucket first.
func (l *lazyS3) S3Config(ctx context.Context) (artifact.S3Config, error) {
	r, err := l.open(ctx)
	if err != nil {
		return artifact.S3Config{}, err
	}
	return r.S3Config(ctx)
}

// Put implements artifact.Repository.
func (l *lazyS3) Put(ctx context.Context, path string) (artifact.Blob, error) {
	r, err := l.open(ctx)
	if err != nil {
		return artifact.Blob{}, err
	}
	return r.Put(ctx, path)
}

// Get implements artifact.Repository.
func (l *lazyS3) Get(ctx context.Context, digest string, w io.Writer) error {
	r, err := l.open(ctx)
	if err != nil {
		return err
	}
	return r.Get(ctx, digest, w)
}

// Stat implements artifact.Repository.
func (l *lazyS3) Stat(ctx context.Context, digest string) (artifact.Blob, error) {
	r, err := l.open(ctx)
	if err != nil {
		return artifact.Blob{}, err
	}
	return r.Stat(ctx, digest)
}

// List implements artifact.Repository.
func (l *lazyS3) List(ctx context.Context, prefix string) ([]artifact.Blob, error) {
	r, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return r.List(ctx, prefix)
}

// Delete implements artifact.Repository.
func (l *lazyS3) Delete(ctx context.Context, digest string) error {
	r, err := l.open(ctx)
	if err != nil {
		return err
	}
	return r.Delete(ctx, digest)
}
