// Package fetch reads what a training job's initializers bring in: a
// file or directory on this machine, or a file over http(s). The
// workflow checker uses Parse at submit; kiln's hidden initialize
// command uses Fetch; the initializer node uses Version for its cache key.
package fetch

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Source is a parsed storageUri.
type Source struct {
	// URI is the storageUri as written.
	URI string
	// Path is a local source's path (file:// stripped); empty for http(s).
	Path string
	// URL is an http(s) source; nil for a local one.
	URL *url.URL
}

// Local reports whether s is a path on this machine.
func (s Source) Local() bool { return s.URL == nil }

// Parse reads a storageUri: a path or file:// URI, or an http:// or
// https:// URL. An s3:// URI is KLN-1056 (no artifact store is
// configured), any other scheme KLN-1055. A relative path is kept
// relative: it is read from the job's working directory.
func Parse(uri string) (Source, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	switch {
	case uri == "":
		return Source{}, &apiv1.Error{Code: apiv1.CodeRequired, Message: "storageUri is required"}
	case !ok:
		return Source{URI: uri, Path: uri}, nil
	case scheme == "file":
		if rest == "" {
			return Source{}, &apiv1.Error{Code: apiv1.CodeInvalidValue, Message: fmt.Sprintf("%q names no path", uri)}
		}
		return Source{URI: uri, Path: filepath.FromSlash(rest)}, nil
	case scheme == "http" || scheme == "https":
		u, err := url.Parse(uri)
		if err != nil || u.Host == "" {
			return Source{}, &apiv1.Error{Code: apiv1.CodeInvalidValue, Message: fmt.Sprintf("%q is not a URL kiln can download: %v", uri, err)}
		}
		return Source{URI: uri, URL: u}, nil
	case scheme == "s3":
		return Source{}, &apiv1.Error{
			Code: apiv1.CodeArtifactStore, Message: fmt.Sprintf("%q is an s3:// URI, which needs an artifact store, and none is configured", uri),
			Hint: "copy the data to a local path or an http(s) server for now",
		}
	}
	return Source{}, &apiv1.Error{
		Code: apiv1.CodeStorageScheme, Message: fmt.Sprintf("kiln cannot fetch %q: scheme %s:// is not supported", uri, scheme),
		Hint: "use a local path, file://, http:// or https://",
	}
}

// Abs returns s with a relative path made absolute against dir.
func (s Source) Abs(dir string) Source {
	if s.Local() && !filepath.IsAbs(s.Path) && dir != "" {
		s.Path = filepath.Join(dir, s.Path)
	}
	return s
}
