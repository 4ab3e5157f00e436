package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"time"
)

// Error kinds, as the initialize command reports them by its exit code.
var (
	// ErrNotFound: the file, or the URL (HTTP 404 or 410), does not exist.
	ErrNotFound = errors.New("fetch: not found")
	// ErrUnreachable: the server could not be reached.
	ErrUnreachable = errors.New("fetch: unreachable")
)

// Fetch copies the source into dir (created): a directory's contents, or
// a file (local or downloaded) under its own base name. token, if set,
// goes to an http(s) server as a bearer token.
func Fetch(ctx context.Context, s Source, dir, token string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if s.Local() {
		return copyLocal(s.Path, dir)
	}
	return download(ctx, s, dir, token)
}

func copyLocal(src, dir string) error {
	fi, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s does not exist", ErrNotFound, src)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return copyFile(src, filepath.Join(dir, filepath.Base(src)), fi.Mode())
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil // links and devices are not data
		}
		return copyFile(p, dst, info.Mode())
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFile(dst, in, mode.Perm()|0o600)
}

// writeFile writes r to dst through a temporary file and a rename, so a
// half-written file is never taken for the whole one.
func writeFile(dst string, r io.Reader, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".fetch-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// client bounds how long a server may take to answer (not to send).
var client = &http.Client{Transport: &http.Transport{
	Proxy: http.ProxyFromEnvironment, DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout: 30 * time.Second, ResponseHeaderTimeout: time.Minute,
}}

func request(ctx context.Context, method string, s Source, token string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.URL.String(), nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s answered %s", ErrNotFound, s.URI, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("%s answered %s", s.URI, resp.Status)
	}
	return resp, nil
}

func download(ctx context.Context, s Source, dir, token string) error {
	resp, err := request(ctx, http.MethodGet, s, token)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	name := path.Base(s.URL.Path)
	if name == "/" || name == "." || name == "" {
		name = "download"
	}
	return writeFile(filepath.Join(dir, name), resp.Body, 0o644)
}

// Version names what an http(s) source holds now, for a cache key: the
// URI with the server's ETag, else its Last-Modified. why says why it
// cannot be told (the server sends neither, or cannot be asked).
func Version(ctx context.Context, s Source, token string) (version, why string) {
	resp, err := request(ctx, http.MethodHead, s, token)
	if err != nil {
		return "", "its storageUri cannot be checked: " + err.Error()
	}
	resp.Body.Close()
	if e := resp.Header.Get("ETag"); e != "" {
		return s.URI + " etag:" + e, ""
	}
	if m := resp.Header.Get("Last-Modified"); m != "" {
		return s.URI + " last-modified:" + m, ""
	}
	return "", fmt.Sprintf("the server of %s sends neither ETag nor Last-Modified, so kiln cannot tell whether what it serves changed", s.URI)
}
