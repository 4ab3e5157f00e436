package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact/artifacttest"
)

// artifactsWorkflow's task make writes a model (a file) and a tool (an
// executable in a directory); use reads both.
const artifactsWorkflow = `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: artifacts}
spec:
  tasks:
  - name: make
    cache: {version: "1"}
    command: [sh, -c, 'echo weights > {{outputs.dir}}/model.bin; mkdir -p {{outputs.dir}}/bin; printf "#!/bin/sh\necho tool\n" > {{outputs.dir}}/bin/tool; chmod +x {{outputs.dir}}/bin/tool']
    outputs:
      artifacts: [{name: model, path: model.bin}, {name: bin, path: bin}]
  - name: use
    dependsOn: [make]
    command: [sh, -c, 'test "$(cat {{tasks.make.outputs.artifacts.model}})" = weights && {{tasks.make.outputs.artifacts.bin}}/tool']
`

// A home configured with artifacts.s3 (the real S3 server of
// hack/s3-up.sh, keys in a kiln secret) uploads a task's output artifacts
// as it succeeds and records them; kiln artifacts ls and get show and
// download them; and a rerun whose upstream outputs' directory is gone
// gets them fetched back from the bucket before its task starts.
func TestArtifactsThroughS3(t *testing.T) {
	t.Parallel()
	c := artifacttest.S3Config(t)
	home, dir := newHome(t), t.TempDir()
	config := fmt.Sprintf("artifacts:\n  s3: {endpoint: %q, bucket: %s, prefix: %q, region: us-east-1, secret: s3-keys}\n",
		c.Endpoint, c.Bucket, c.Prefix)
	writeFile(t, home, "config.yaml", config)
	if r := kilnStdin(t, nil, home, c.AccessKey+":"+c.SecretKey, "secret", "set", "s3-keys"); r.code != 0 {
		t.Fatalf("secret set: %s %s", r.stdout, r.stderr)
	}
	wf := writeFile(t, dir, "wf.yaml", artifactsWorkflow)
	if r := kiln(t, home, "run", wf, "-q"); r.code != 0 {
		t.Fatalf("run = exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	id := newestRun(t, home)

	r := kiln(t, home, "artifacts", "ls", string(id), "-o", "json")
	var list []apiv1.RunArtifact
	if err := unmarshalList(r.stdout, "RunArtifactList", &list); err != nil || r.code != 0 {
		t.Fatalf("artifacts ls -o json = exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	sum := sha256.Sum256([]byte("weights\n"))
	byName := map[string]apiv1.RunArtifact{}
	for _, a := range list {
		byName[a.Node+"/"+a.Name] = a
	}
	if m := byName["make/model"]; m.Digest != "sha256:"+hex.EncodeToString(sum[:]) || m.Size != 8 || m.Path != "model.bin" {
		t.Errorf("make/model recorded as %+v, want the digest and size of \"weights\\n\"", m)
	}
	if b := byName["make/bin"]; !b.Dir || len(b.Files) != 1 || b.Files[0].Path != "tool" || b.Files[0].Mode != 0o755 {
		t.Errorf("make/bin recorded as %+v, want a directory with the executable tool", b)
	}
	if r := kiln(t, home, "artifacts", "ls", string(id)); !strings.Contains(r.stdout, "make/model") || !strings.Contains(r.stdout, "dir (1 files)") {
		t.Errorf("artifacts ls = %q %q", r.stdout, r.stderr)
	}

	out := filepath.Join(t.TempDir(), "model.bin")
	if r := kiln(t, home, "artifacts", "get", string(id), "make/model", "-o", out); r.code != 0 {
		t.Fatalf("artifacts get make/model = exit %d: %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "weights\n" {
		t.Errorf("the downloaded model holds %q (%v)", b, err)
	}
	binDir := filepath.Join(t.TempDir(), "bin")
	if r := kiln(t, home, "artifacts", "get", string(id), "make/bin", "-o", binDir); r.code != 0 {
		t.Fatalf("artifacts get make/bin = exit %d: %s", r.code, r.stderr)
	}
	if fi, err := os.Stat(filepath.Join(binDir, "tool")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("the downloaded bin/tool: %v, %v; want an executable", fi, err)
	}
	if r := kiln(t, home, "artifacts", "get", string(id), "make/nothing"); r.code == 0 || !strings.Contains(r.stderr, "KLN-4055") {
		t.Errorf("artifacts get of an artifact never stored = exit %d %q; want KLN-4055", r.code, r.stderr)
	}

	// The cached result's artifacts are in the bucket too (its cache/ prefix).
	entries := cacheList(t, nil, home)
	if len(entries) != 1 {
		t.Fatalf("cache entries = %+v, want make's", entries)
	}
	key := entries[0].Key[len("sha256:") : len("sha256:")+12]
	if r := kiln(t, home, "cache", "get", key, "model"); r.code != 0 || r.stdout != "weights\n" {
		t.Errorf("cache get %s model = exit %d %q %q", key, r.code, r.stdout, r.stderr)
	}

	// Through a server on the same home: the API lists and serves them too.
	base, admin, _ := startServeAs(t, home, nil, nil, "--isolation", "none")
	remote := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	if r := kilnWithEnv(t, remote, newHome(t), "artifacts", "get", string(id), "make/model"); r.code != 0 || r.stdout != "weights\n" {
		t.Errorf("artifacts get through the server = exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := kilnWithEnv(t, remote, newHome(t), "artifacts", "get", string(id), "make/bin", "-o", filepath.Join(t.TempDir(), "b")); r.code != 0 || !strings.Contains(r.stderr, "1 files") {
		t.Errorf("artifacts get of a directory through the server = exit %d %q", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, remote, newHome(t), "cache", "get", key, "bin", "-o", filepath.Join(t.TempDir(), "c")); r.code != 0 || !strings.Contains(r.stderr, "1 files") {
		t.Errorf("cache get of a directory through the server = exit %d %q", r.code, r.stderr)
	}
	if r := kilnWithEnv(t, remote, newHome(t), "artifacts", "get", string(id), "make/nothing"); r.code == 0 || !strings.Contains(r.stderr, "KLN-4055") {
		t.Errorf("artifacts get of an artifact never stored through the server = exit %d %q; want KLN-4055", r.code, r.stderr)
	}

	// The producer's files go; the rerun of use must fetch them from the bucket.
	model := findFile(t, home, "model.bin")
	if err := os.RemoveAll(filepath.Dir(model)); err != nil {
		t.Fatal(err)
	}
	if r := kiln(t, home, "rerun", string(id), "--from", "use", "-q"); r.code != 0 {
		t.Fatalf("rerun --from use after the outputs were removed = exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(model); err != nil || string(b) != "weights\n" {
		t.Errorf("the fetched model holds %q (%v)", b, err)
	}
}

// findFile is the one path under root named name.
func findFile(t *testing.T, root, name string) string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("files named %s under %s: %v, want one", name, root, found)
	}
	return found[0]
}
