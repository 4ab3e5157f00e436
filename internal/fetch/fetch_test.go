package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for uri, want := range map[string]apiv1.Code{
		"data": "", "/abs/data": "", "file:///abs/data": "", "http://h/x": "", "https://h:8/x.bin": "",
		"": apiv1.CodeRequired, "file://": apiv1.CodeInvalidValue, "http://": apiv1.CodeInvalidValue,
		"s3://b/k": apiv1.CodeArtifactStore, "hf://org/model": apiv1.CodeStorageScheme, "gs://b/k": apiv1.CodeStorageScheme,
	} {
		s, err := Parse(uri)
		if got := apiv1.CodeOf(err); got != want {
			t.Errorf("Parse(%q) = %v, want code %q", uri, err, want)
		}
		if err == nil && s.URI != uri {
			t.Errorf("Parse(%q) kept URI %q", uri, s.URI)
		}
	}
	if s, _ := Parse("file:///abs/data"); !s.Local() || s.Path != "/abs/data" {
		t.Errorf("file:// = %+v, want the local path /abs/data", s)
	}
	if s, _ := Parse("data"); s.Abs("/job").Path != "/job/data" || s.Path != "data" {
		t.Errorf("a relative path is made absolute against the job's directory only by Abs: %+v", s)
	}
}

func TestFetchLocal(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.txt": "A", "sub/b.txt": "B"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := Fetch(t.Context(), Source{Path: src}, dst, ""); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.txt": "A", "sub/b.txt": "B"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != text {
			t.Errorf("%s = %q, %v; want %q", name, b, err, text)
		}
	}
	one := filepath.Join(t.TempDir(), "one")
	if err := Fetch(t.Context(), Source{Path: filepath.Join(src, "a.txt")}, one, ""); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(one, "a.txt")); string(b) != "A" {
		t.Errorf("a file is copied under its own name; got %q", b)
	}
	err := Fetch(t.Context(), Source{Path: filepath.Join(src, "nope")}, one, "")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing file: %v, want ErrNotFound", err)
	}
}

func TestDownloadAndVersion(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/etag.bin":
			w.Header().Set("ETag", `"e1"`)
		case "/lm.bin":
			w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		case "/auth.bin":
			if r.Header.Get("Authorization") != "Bearer tok" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
		case "/none.bin":
		default:
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "body of "+r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	src := func(p string) Source { s, _ := Parse(srv.URL + p); return s }
	dst := t.TempDir()
	if err := Fetch(t.Context(), src("/auth.bin"), dst, "tok"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "auth.bin")); string(b) != "body of /auth.bin" {
		t.Errorf("downloaded %q", b)
	}
	if err := Fetch(t.Context(), src("/auth.bin"), dst, ""); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "401") {
		t.Errorf("without the token: %v, want the server's 401", err)
	}
	if err := Fetch(t.Context(), src("/gone.bin"), dst, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("404: %v, want ErrNotFound", err)
	}
	unreachable, _ := Parse("http://127.0.0.1:1/x")
	if err := Fetch(t.Context(), unreachable, dst, ""); !errors.Is(err, ErrUnreachable) {
		t.Errorf("a closed port: %v, want ErrUnreachable", err)
	}
	if v, why := Version(t.Context(), src("/etag.bin"), ""); why != "" || !strings.Contains(v, `etag:"e1"`) {
		t.Errorf("ETag version = %q %q", v, why)
	}
	if v, why := Version(t.Context(), src("/lm.bin"), ""); why != "" || !strings.Contains(v, "last-modified:Mon, 02 Jan 2006") {
		t.Errorf("Last-Modified version = %q %q", v, why)
	}
	if v, why := Version(t.Context(), src("/none.bin"), ""); v != "" || !strings.Contains(why, "neither ETag nor Last-Modified") {
		t.Errorf("no validator = %q %q, want a reason", v, why)
	}
}
