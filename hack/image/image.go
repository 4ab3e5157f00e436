package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// options say what goes into the image and where it is written.
type options struct {
	kiln, out, version, certs string
}

// The image's user, and where kiln keeps its state: the same as the
// Deployment's securityContext and KILN_HOME.
const (
	uid     = 65532
	home    = "/var/lib/kiln"
	binPath = "/usr/local/bin/kiln"
	port    = "8420"
)

// write builds the image and writes it as an OCI image layout at o.out,
// tagged o.version, and returns the manifest's digest.
func write(o options) (v1.Hash, error) {
	img, err := build(o)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := os.RemoveAll(o.out); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(o.out, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	ref := map[string]string{"org.opencontainers.image.ref.name": o.version}
	if err := p.AppendImage(img, layout.WithAnnotations(ref)); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// build makes the image: one layer over an empty base, and a config that
// runs kiln serve as the user kiln.
func build(o options) (v1.Image, error) {
	arch, err := staticExecutable(o.kiln)
	if err != nil {
		return nil, err
	}
	files, err := rootFS(o)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(files)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: created(), CreatedBy: "kiln hack/image: " + binPath + ", /etc/passwd, CA certificates, " + home,
	}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", arch, created()
	cf.Config = config(o.version)
	return mutate.ConfigFile(img, cf)
}

// config runs kiln serve on every address of the container, as the user
// kiln, with its state in KILN_HOME: every route but /healthz, /readyz
// and the OpenAPI document wants a token, and the first start writes the
// admin token to KILN_HOME/admin.token (mode 0600).
func config(version string) v1.Config {
	return v1.Config{
		Entrypoint: []string{binPath},
		Cmd:        []string{"serve"},
		User:       strconv.Itoa(uid) + ":" + strconv.Itoa(uid),
		WorkingDir: home,
		Env: []string{
			"PATH=/usr/local/bin",
			"HOME=" + home,
			"KILN_HOME=" + home,
			"KILN_ADDR=0.0.0.0:" + port,
		},
		ExposedPorts: map[string]struct{}{port + "/tcp": {}},
		// No VOLUME for KILN_HOME: runtimes that honour one (umoci, for
		// runc) mount an empty tmpfs owned by root there, which the user
		// kiln cannot write; mount a volume of yours (a PVC) instead.
		StopSignal: "SIGTERM",
		Labels: map[string]string{
			"org.opencontainers.image.title":       "kiln",
			"org.opencontainers.image.description": "kiln serve: ML pipelines and distributed training jobs, locally or on Kubernetes",
			"org.opencontainers.image.version":     version,
		},
	}
}

// created is when the image was made, for reproducible builds: the
// environment's SOURCE_DATE_EPOCH, else the Unix epoch. The same binary
// then always makes the same image digest.
func created() v1.Time {
	sec, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil {
		sec = 0
	}
	return v1.Time{Time: time.Unix(sec, 0).UTC()}
}

// entry is one file or directory of the image's only layer.
type entry struct {
	path     string
	mode     int64
	owner    int
	body     []byte // nil for a directory
	fromFile string // the body is this file's content
}

// rootFS is the image's file system as a tar stream.
func rootFS(o options) ([]byte, error) {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\n" +
		fmt.Sprintf("kiln:x:%d:%d:kiln:%s:/sbin/nologin\n", uid, uid, home)
	group := "root:x:0:\n" + fmt.Sprintf("kiln:x:%d:\n", uid)
	entries := []entry{
		{path: "etc/", mode: 0o755},
		{path: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{path: "etc/group", mode: 0o644, body: []byte(group)},
		// Go's resolver reads it; files first, as glibc's default.
		{path: "etc/nsswitch.conf", mode: 0o644, body: []byte("hosts: files dns\n")},
		{path: "etc/ssl/", mode: 0o755},
		{path: "etc/ssl/certs/", mode: 0o755},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, fromFile: o.certs},
		{path: "tmp/", mode: 0o1777},
		{path: "usr/", mode: 0o755},
		{path: "usr/local/", mode: 0o755},
		{path: "usr/local/bin/", mode: 0o755},
		{path: binPath[1:], mode: 0o755, fromFile: o.kiln},
		{path: "var/", mode: 0o755},
		{path: "var/lib/", mode: 0o755},
		{path: home[1:] + "/", mode: 0o700, owner: uid},
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := e.write(tw); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// write appends e to tw, with the fixed time of created.
func (e entry) write(tw *tar.Writer) error {
	h := &tar.Header{
		Name: e.path, Mode: e.mode, Uid: e.owner, Gid: e.owner, ModTime: created().Time,
		Typeflag: tar.TypeDir, Format: tar.FormatPAX,
	}
	body := e.body
	if e.fromFile != "" {
		b, err := os.ReadFile(e.fromFile)
		if err != nil {
			return fmt.Errorf("/%s: %w", e.path, err)
		}
		body = b
	}
	if body != nil || e.fromFile != "" {
		h.Typeflag, h.Size = tar.TypeReg, int64(len(body))
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(body)
	return err
}
