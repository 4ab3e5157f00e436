package e2e

import (
	"archive/tar"
	"bufio"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// releaseVersion is the version the tests stamp on their release build.
const releaseVersion = "v0.0.0-e2e"

// release is make release image's output, made once for the tests that
// read it, in the test binary's temporary directory.
var release struct {
	once sync.Once
	dir  string
	out  string
	err  error
}

// releaseBuild runs make release image as a user would (OUT a temporary
// directory) and returns that directory: kiln and kiln-oci in it.
func releaseBuild(t *testing.T) string {
	t.Helper()
	release.once.Do(func() {
		release.dir = filepath.Join(filepath.Dir(kilnBin), "release")
		cmd := exec.Command("make", "-s", "-C", "../..", "release", "image", "OUT="+release.dir, "VERSION="+releaseVersion)
		var b []byte
		b, release.err = cmd.CombinedOutput()
		release.out = string(b)
	})
	if release.err != nil {
		t.Fatalf("make release image: %v\n%s", release.err, release.out)
	}
	return release.dir
}

// TestReleaseIsStatic: make release's kiln, and the kiln make build makes
// (the one every other test runs), ask for no dynamic loader and no
// shared library, so an image with nothing else in it runs them; the
// release says the version it was stamped with.
func TestReleaseIsStatic(t *testing.T) {
	dir := releaseBuild(t)
	for _, bin := range []string{filepath.Join(dir, "kiln"), kilnBin} {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s has a %s program header: it is dynamically linked", bin, p.Type)
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("%s needs shared libraries %q", bin, libs)
		}
		f.Close()
	}
	out, err := exec.Command(filepath.Join(dir, "kiln"), "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kiln "+releaseVersion+",") {
		t.Errorf("kiln version of the release: %v %s; want it to say %s", err, out, releaseVersion)
	}
}

// TestImageRunsInRuntime unpacks the image make image writes with umoci
// and runs it with runc, both from Debian: kiln serve starts as the image
// says (the user kiln, KILN_HOME, its entrypoint and command), answers
// /healthz, refuses the API without a token and takes the admin token it
// wrote in its home, and stops on SIGTERM. Only the address changes: the
// container shares the machine's network namespace and listens on
// 127.0.0.1 at a port the kernel picks, so that no other server's port is
// taken. As root with runc and umoci only (make deps installs them);
// KILN_REQUIRE_RUNTIME=1 (.ci/run) makes their absence a failure.
func TestImageRunsInRuntime(t *testing.T) {
	runc, umoci := needRuntime(t)
	dir := releaseBuild(t)
	work := t.TempDir()
	bundle := filepath.Join(work, "bundle")
	if out, err := exec.Command(umoci, "unpack", "--image", filepath.Join(dir, "kiln-oci")+":"+releaseVersion, bundle).CombinedOutput(); err != nil {
		t.Fatalf("umoci unpack: %v\n%s", err, out)
	}
	hostLoopback(t, filepath.Join(bundle, "config.json"))
	archived(t, filepath.Join(dir, "kiln-oci.tar"))

	// runc names the container's cgroups after its ID: one of its own.
	state, id := filepath.Join(work, "runc"), fmt.Sprintf("kiln-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	run := exec.Command(runc, "--root", state, "run", "--bundle", bundle, id)
	stderr, err := os.Create(filepath.Join(work, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	run.Stderr = stderr
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command(runc, "--root", state, "delete", "--force", id).Run()
		_ = run.Process.Kill()
		_ = run.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(stderr.Name())
			t.Logf("the container's stderr:\n%s", b)
		}
	})
	lines := bufio.NewScanner(stdout)
	var base string
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
		if addr, ok := strings.CutPrefix(lines.Text(), "kiln serving on "); ok {
			base = addr
			break
		}
	}
	if base == "" {
		t.Fatalf("kiln serve in the container never said where it listens; it said:\n%s", strings.Join(said, "\n"))
	}
	rest := make(chan string, 1)
	go func() { b, _ := io.ReadAll(stdout); rest <- string(b) }()

	checkServed(t, base, filepath.Join(bundle, "rootfs", "var", "lib", "kiln"))
	// The image has no shell and no cat: kiln itself makes a token, as
	// the docs say to with kubectl exec.
	tok, err := exec.Command(runc, "--root", state, "exec", id, "kiln", "token", "create", "me", "--role", "admin", "--project", "*").Output()
	if err != nil {
		t.Fatalf("runc exec kiln token create: %v", err)
	}
	if code, body := apiGet(t, base, strings.TrimSpace(string(tok)), "/api/v1/runs"); code != http.StatusOK {
		t.Errorf("GET /api/v1/runs with the token kiln token create made in the container: %d %s", code, body)
	}

	if out, err := exec.Command(runc, "--root", state, "kill", id, "TERM").CombinedOutput(); err != nil {
		t.Fatalf("runc kill: %v %s", err, out)
	}
	if err := waitExit(run, 30*time.Second); err != nil {
		t.Errorf("kiln serve in the container after SIGTERM: %v, want a clean exit", err)
	}
	if tail := <-rest; !strings.Contains(tail, "kiln stopped") {
		t.Errorf("kiln serve did not say it stopped; it said:\n%s", tail)
	}
}

// needRuntime returns runc's and umoci's paths, or skips the test (fails
// it with KILN_REQUIRE_RUNTIME=1) when they cannot run containers here.
func needRuntime(t *testing.T) (string, string) {
	t.Helper()
	why := ""
	runc, err1 := exec.LookPath("runc")
	umoci, err2 := exec.LookPath("umoci")
	switch {
	case os.Geteuid() != 0:
		why = "runc runs containers as root here, and the test runs as uid " + strconv.Itoa(os.Geteuid())
	case err1 != nil || err2 != nil:
		why = "runc and umoci are not installed (make deps installs them from Debian)"
	}
	if why != "" {
		if os.Getenv("KILN_REQUIRE_RUNTIME") == "1" {
			t.Fatalf("a container runtime is required (KILN_REQUIRE_RUNTIME=1): %s", why)
		}
		t.Skip(why)
	}
	return runc, umoci
}

// hostLoopback edits the bundle's runtime config that umoci wrote from
// the image: no terminal, the machine's network namespace, and kiln serve
// on 127.0.0.1 at a port the kernel picks. Nothing else changes.
func hostLoopback(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spec map[string]any
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	process := spec["process"].(map[string]any)
	process["terminal"] = false
	env := process["env"].([]any)
	found := false
	for i, kv := range env {
		if strings.HasPrefix(kv.(string), "KILN_ADDR=") {
			env[i], found = "KILN_ADDR=127.0.0.1:0", true
		}
	}
	if !found {
		t.Fatalf("the image sets no KILN_ADDR: %v", env)
	}
	linux := spec["linux"].(map[string]any)
	var kept []any
	for _, ns := range linux["namespaces"].([]any) {
		if ns.(map[string]any)["type"] != "network" {
			kept = append(kept, ns)
		}
	}
	linux["namespaces"] = kept
	if b, err = json.Marshal(spec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkServed asks the containerised server at base what a user would,
// home being its KILN_HOME as seen from outside the container.
func checkServed(t *testing.T, base, home string) {
	t.Helper()
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz: %d, want 200", resp.StatusCode)
	}
	if code, body := apiGet(t, base, "", "/api/v1/version"); code != http.StatusOK || !strings.Contains(body, releaseVersion) {
		t.Errorf("GET /api/v1/version: %d %s, want the stamped %s", code, body, releaseVersion)
	}
	if code, _ := apiGet(t, base, "", "/api/v1/runs"); code != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/runs without a token: %d, want 401", code)
	}
	tokenFile := filepath.Join(home, "admin.token")
	fi, err := os.Stat(tokenFile)
	if err != nil {
		t.Fatalf("kiln serve wrote no admin token in KILN_HOME: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 65532 || fi.Mode().Perm() != 0o600 {
		t.Errorf("admin.token: owner %d, mode %o; want the image's user kiln (65532) and 0600", st.Uid, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := apiGet(t, base, strings.TrimSpace(string(raw)), "/api/v1/runs"); code != http.StatusOK {
		t.Errorf("GET /api/v1/runs with the admin token: %d %s", code, body)
	}
}

// archived checks that make image's OCI archive holds the layout: its
// index, its marker file and a blob for each of the image's parts.
func archived(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	blobs := 0
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		names[name] = true
		if strings.HasPrefix(name, "blobs/sha256/") && h.Typeflag == tar.TypeReg {
			blobs++
		}
	}
	if !names["index.json"] || !names["oci-layout"] || blobs != 3 {
		t.Errorf("%s holds %v: want index.json, oci-layout and 3 blobs (manifest, config, layer)", path, names)
	}
}
