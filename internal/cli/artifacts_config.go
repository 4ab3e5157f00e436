package cli

import (
	"fmt"
	"net/url"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/artifact"
)

// artifactsFile is the configuration file's artifacts section:
//
//	artifacts:
//	  s3:
//	    endpoint: https://s3.example.com   # or host:port
//	    bucket: kiln
//	    prefix: team-a/                    # optional
//	    region: us-east-1                  # optional
//	    insecure: false                    # true: plain HTTP
//	    secret: s3-credentials             # kiln secret (project default): ACCESS_KEY:SECRET_KEY
type artifactsFile struct {
	S3 *s3File `json:"s3,omitempty"`
}

type s3File struct {
	Endpoint string `json:"endpoint,omitempty"`
	Bucket   string `json:"bucket,omitempty"`
	Prefix   string `json:"prefix,omitempty"`
	Region   string `json:"region,omitempty"`
	Insecure bool   `json:"insecure,omitempty"`
	Secret   string `json:"secret,omitempty"`
}

// compile checks the section and turns it into the app's settings.
func (a artifactsFile) compile(file string) (app.Artifacts, error) {
	out := app.Artifacts{File: file}
	s := a.S3
	if s == nil {
		return out, nil
	}
	bad := func(field, msg string) error {
		return &apiv1.Error{Code: apiv1.CodeArtifactConfig, File: file, Field: "artifacts.s3." + field, Message: msg}
	}
	switch {
	case s.Endpoint == "":
		return out, bad("endpoint", "the S3 endpoint is required (https://host[:port] or host:port)")
	case strings.Contains(s.Endpoint, "://"):
		u, err := url.Parse(s.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" {
			return out, bad("endpoint", fmt.Sprintf("%q is not an http(s)://host[:port] URL without a path", s.Endpoint))
		}
		if u.Scheme == "https" && s.Insecure {
			return out, bad("insecure", "insecure: true (plain HTTP) contradicts the endpoint's https://")
		}
	case strings.ContainsAny(s.Endpoint, "/ "):
		return out, bad("endpoint", fmt.Sprintf("%q is not host[:port]", s.Endpoint))
	}
	if s.Bucket == "" {
		return out, bad("bucket", "the bucket is required")
	}
	if strings.HasPrefix(s.Prefix, "/") {
		return out, bad("prefix", fmt.Sprintf("%q must not start with /", s.Prefix))
	}
	out.S3 = &artifact.S3Config{
		Endpoint: s.Endpoint, Bucket: s.Bucket, Prefix: s.Prefix, Region: s.Region, Insecure: s.Insecure,
	}
	out.Secret = s.Secret
	return out, nil
}

// artifacts reads the artifact repository's settings from the
// configuration file.
func (b *backendFlags) artifacts(home string) (app.Artifacts, error) {
	cfg, path, err := b.load(home)
	if err != nil {
		return app.Artifacts{}, err
	}
	return cfg.Artifacts.compile(path)
}
