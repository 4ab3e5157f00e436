package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// staticHello builds a small Go program without cgo: a static executable
// like kiln's release build, quicker to make.
func staticHello(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hello")
	build := exec.Command("go", "build", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestImageLayout writes the image as make image does and reads it back:
// the layout's tag, an OCI manifest of one layer, a config that runs kiln
// serve as the user kiln, and exactly the files that layer should hold.
func TestImageLayout(t *testing.T) {
	bin := staticHello(t)
	out := filepath.Join(t.TempDir(), "oci")
	o := options{kiln: bin, out: out, version: "v9.9.9", certs: "testdata/ca.crt"}
	digest, err := write(o)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest ||
		im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v9.9.9" {
		t.Fatalf("index.json: %+v, want one image %s tagged v9.9.9", im.Manifests, digest)
	}
	img, err := idx.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON ||
		len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("manifest: %s, config %s, layers %+v; want OCI types and one gzip layer", m.MediaType, m.Config.MediaType, m.Layers)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, cf)
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	files := readLayer(t, layers[0])
	checkFiles(t, files, bin)

	again, err := write(o)
	if err != nil {
		t.Fatal(err)
	}
	if again != digest {
		t.Errorf("the same binary made image %s, then %s: the image should be reproducible", digest, again)
	}
}

func checkConfig(t *testing.T, cf *v1.ConfigFile) {
	t.Helper()
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s (the binary's)", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	c := cf.Config
	want := v1.Config{
		Entrypoint:   []string{"/usr/local/bin/kiln"},
		Cmd:          []string{"serve"},
		User:         "65532:65532",
		WorkingDir:   "/var/lib/kiln",
		Env:          []string{"PATH=/usr/local/bin", "HOME=/var/lib/kiln", "KILN_HOME=/var/lib/kiln", "KILN_ADDR=0.0.0.0:8420"},
		ExposedPorts: map[string]struct{}{"8420/tcp": {}},
		StopSignal:   "SIGTERM",
		Labels:       c.Labels,
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("image config (-want +got):\n%s", diff)
	}
	if c.Labels["org.opencontainers.image.version"] != "v9.9.9" {
		t.Errorf("labels %v: want org.opencontainers.image.version v9.9.9", c.Labels)
	}
	if len(cf.RootFS.DiffIDs) != 1 || len(cf.History) != 1 {
		t.Errorf("rootfs %+v, history %+v: want one layer and its history", cf.RootFS, cf.History)
	}
}

// file is what the test reads of one entry of the layer.
type file struct {
	Mode     int64
	UID, GID int
	Dir      bool
	Body     string
}

func readLayer(t *testing.T, l v1.Layer) map[string]file {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	files := map[string]file{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = file{Mode: h.Mode, UID: h.Uid, GID: h.Gid, Dir: h.Typeflag == tar.TypeDir, Body: string(b)}
	}
}

func checkFiles(t *testing.T, files map[string]file, bin string) {
	t.Helper()
	exe, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile("testdata/ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	})
	want := []string{
		"etc/", "etc/group", "etc/nsswitch.conf", "etc/passwd", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt",
		"tmp/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/kiln", "var/", "var/lib/", "var/lib/kiln/",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("the layer's files (-want +got):\n%s", diff)
	}
	if f := files["usr/local/bin/kiln"]; !bytes.Equal([]byte(f.Body), exe) || f.Mode != 0o755 || f.UID != 0 {
		t.Errorf("usr/local/bin/kiln: mode %o, owner %d, %d bytes; want the binary (%d bytes), 0755, root", f.Mode, f.UID, len(f.Body), len(exe))
	}
	if f := files["etc/ssl/certs/ca-certificates.crt"]; f.Body != string(ca) {
		t.Errorf("the CA bundle is not the one given (%d bytes)", len(f.Body))
	}
	if f := files["var/lib/kiln/"]; !f.Dir || f.Mode != 0o700 || f.UID != 65532 || f.GID != 65532 {
		t.Errorf("KILN_HOME: %+v, want a directory of 65532:65532, mode 0700", f)
	}
	if f := files["tmp/"]; f.Mode != 0o1777 {
		t.Errorf("/tmp: mode %o, want 1777", f.Mode)
	}
	if !strings.Contains(files["etc/passwd"].Body, "\nkiln:x:65532:65532:kiln:/var/lib/kiln:/sbin/nologin\n") ||
		!strings.Contains(files["etc/group"].Body, "\nkiln:x:65532:\n") {
		t.Errorf("/etc/passwd and /etc/group should name the user kiln (65532):\n%s%s", files["etc/passwd"].Body, files["etc/group"].Body)
	}
}

// TestImageRefusesDynamicExecutables: an empty base has no loader and no
// libc, so a binary that needs them is refused, with how to build one.
func TestImageRefusesDynamicExecutables(t *testing.T) {
	out := filepath.Join(t.TempDir(), "oci")
	_, err := write(options{kiln: "testdata/ca.crt", out: out, version: "x", certs: "testdata/ca.crt"})
	if err == nil || !strings.Contains(err.Error(), "not an ELF executable") {
		t.Errorf("a text file as kiln: %v, want not an ELF executable", err)
	}
	dyn := dynamicExecutable(t)
	_, err = write(options{kiln: dyn, out: out, version: "x", certs: "testdata/ca.crt"})
	if err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("the dynamic %s as kiln: %v, want a refusal that says CGO_ENABLED=0", dyn, err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused build left %s behind: %v", out, err)
	}
}

// dynamicExecutable finds an executable with a dynamic loader: the
// system's env (every Linux distribution links it with libc).
func dynamicExecutable(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/env", "/bin/env"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				return p
			}
		}
	}
	t.Skip("no dynamically linked env on this system to refuse")
	return ""
}
