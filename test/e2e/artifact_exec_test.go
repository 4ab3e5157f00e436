package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/artifact"
	"kiln.dev/kiln/internal/artifact/artifacttest"
)

// kiln artifact-exec, the wrapper a pod would run its task under, run as
// a real process with a pod's environment against the real S3 server:
// it fetches the inputs before the command, stores the declared outputs
// after it succeeds and records them; a failing command's exit code is
// its own and nothing is stored.
func TestArtifactExecWrapsATask(t *testing.T) {
	t.Parallel()
	c := artifacttest.S3Config(t)
	repo, err := artifact.NewS3(c)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "data.txt")
	if err := os.WriteFile(src, []byte("input bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := apiv1.CachedArtifact{Name: "data", Path: "data.txt"}
	if err := artifact.Upload(t.Context(), repo, &in, src); err != nil {
		t.Fatal(err)
	}
	work, outputs := t.TempDir(), t.TempDir()
	inputs, _ := json.Marshal([]map[string]any{{"dst": filepath.Join(work, "in", "data.txt"), "artifact": in}})
	env := append(os.Environ(),
		"KILN_S3_ENDPOINT="+c.Endpoint, "KILN_S3_BUCKET="+c.Bucket, "KILN_S3_PREFIX="+c.Prefix,
		"KILN_S3_ACCESS_KEY="+c.AccessKey, "KILN_S3_SECRET_KEY="+c.SecretKey,
		"KILN_OUTPUTS="+outputs, "KILN_ARTIFACT_INPUTS="+string(inputs),
		`KILN_ARTIFACT_OUTPUTS=[{"name":"result","path":"result.txt"}]`)
	record := filepath.Join(t.TempDir(), "record.json")

	cmd := exec.Command(kilnBin, "artifact-exec", "--record", record, "--", "sh", "-c",
		`tr a-z A-Z < `+filepath.Join(work, "in", "data.txt")+` > "$KILN_OUTPUTS/result.txt"`)
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("artifact-exec: %v\n%s", err, b)
	}
	var stored []apiv1.CachedArtifact
	b, err := os.ReadFile(record)
	if err != nil || json.Unmarshal(b, &stored) != nil || len(stored) != 1 || stored[0].Size != int64(len("INPUT BYTES\n")) {
		t.Fatalf("the record = %s (%v), want result.txt's digest and size", b, err)
	}
	var got strings.Builder
	if err := repo.Get(t.Context(), stored[0].Digest, &got); err != nil || got.String() != "INPUT BYTES\n" {
		t.Fatalf("the stored output = %q, %v; want the command's", got.String(), err)
	}

	fail := exec.Command(kilnBin, "artifact-exec", "--record", record+".2", "--", "sh", "-c", "exit 3")
	fail.Env = env
	if err := fail.Run(); fail.ProcessState == nil || fail.ProcessState.ExitCode() != 3 {
		t.Fatalf("artifact-exec of a command that exits 3 = %v, want exit 3", err)
	}
	if _, err := os.Stat(record + ".2"); !os.IsNotExist(err) {
		t.Fatalf("a failed command's outputs were recorded: %v", err)
	}
}
