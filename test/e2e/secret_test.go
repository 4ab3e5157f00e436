package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretsReachTheTaskOnly(t *testing.T) {
	t.Parallel()
	home := newHome(t)
	base, admin, _ := startServe(t, home)
	client := append(os.Environ(), "KILN_SERVER="+base, "KILN_TOKEN="+admin)
	const secret = "s3cr3t-value-that-must-not-leak"

	set := exec.Command(kilnBin, "--home", t.TempDir(), "secret", "set", "api-key")
	set.Env, set.Stdin = client, strings.NewReader(secret+"\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("kiln secret set: %v %s", err, out)
	}
	dir := t.TempDir()
	wf := writeFile(t, dir, "wf.yaml", `apiVersion: kiln.dev/v1alpha1
kind: Workflow
metadata: {name: secretive}
spec:
  failFast: false
  tasks:
  - name: use
    command: [sh, -c, 'printf %s "$API_KEY" | sha256sum | cut -c1-64']
    env: [{name: API_KEY, valueFrom: {secret: api-key}}]
  - name: missing
    command: ["true"]
    env: [{name: OTHER, valueFrom: {secret: not-set}}]
`)
	r := kilnWithEnv(t, client, t.TempDir(), "run", wf)
	if r.code != 1 || !strings.Contains(r.stderr, "task missing failed (KLN-3011)") {
		t.Fatalf("run: %d %s%s", r.code, r.stdout, r.stderr)
	}
	id := strings.Fields(strings.TrimPrefix(r.stderr[strings.Index(r.stderr, "Run "):], "Run "))[0]
	sum := sha256.Sum256([]byte(secret))
	logs := kilnWithEnv(t, client, t.TempDir(), "logs", id, "use")
	if strings.TrimSpace(logs.stdout) != hex.EncodeToString(sum[:]) {
		t.Errorf("the task saw another value: hash %q", logs.stdout)
	}
	for _, args := range [][]string{{"describe", "run", id, "-o", "json"}, {"secret", "list"}, {"get", "runs", "-o", "yaml"}} {
		if out := kilnWithEnv(t, client, t.TempDir(), args...); strings.Contains(out.stdout+out.stderr, secret) {
			t.Errorf("kiln %v shows the secret", args)
		}
	}
	walkErr := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), "kiln.db") {
			return nil
		}
		if b, _ := os.ReadFile(path); strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", path)
		}
		return nil
	})
	if walkErr != nil {
		t.Fatal(walkErr)
	}
}
