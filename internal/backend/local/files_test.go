package local

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kiln.dev/kiln/internal/backend"
	"kiln.dev/kiln/internal/job"
)

// TestFilesATaskPlantsAreNotServed runs a task that replaces its logs and
// outputs with links to a file outside its attempt directory and with a
// pipe, as a task hunting for the server's secrets would: neither the logs
// nor the outputs carry a byte of it, and reading them does not block. Its
// stdout is replaced once the supervisor has made it (with the first
// chunk); its stderr is a link before its first chunk, which the
// supervisor never writes through: the file linked to is left whole.
func TestFilesATaskPlantsAreNotServed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	secret := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(secret, []byte("root:SECRET-HASH:19000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		"echo visible",
		"until [ -e stdout ]; do sleep 0.01; done", // made with the first chunk
		"rm stdout", "ln -s " + secret + " stdout",
		"ln -s " + secret + " stderr", "echo hidden >&2",
		"ln -s " + secret + " x.stderr",
		"mkfifo y.stdout",
		"ln -s " + secret + " $KILN_OUTPUTS/p",
		"mkdir -p $KILN_OUTPUTS/model", "ln -s " + secret + " $KILN_OUTPUTS/model/w",
	}, "; ")
	spec := &job.Spec{
		ID:        mustID(t, "r/planted/1"),
		Processes: []job.Process{{Command: []string{"sh", "-c", script}, Env: os.Environ()}},
		Outputs:   []string{"p"},
	}
	if err := h.b.Launch(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	st := h.waitExit(t, spec)
	if st.ExitCode != 0 {
		t.Fatalf("task failed: %+v", st)
	}
	if st.Succeeded() || strings.Contains(st.OutputError, "SECRET") || !strings.Contains(st.OutputError, `"p"`) {
		t.Errorf("outputs = %v, error %q; want the linked output refused, by name", st.Outputs, st.OutputError)
	}
	var logs bytes.Buffer
	if err := h.b.Logs(t.Context(), spec.ID, backend.LogOptions{}, &logs); err != nil {
		t.Fatalf("Logs: %v", err)
	}
	got := logs.String()
	if strings.Contains(got, "SECRET") {
		t.Fatalf("logs served the linked file:\n%s", got)
	}
	for _, name := range []string{"stdout", "stderr", "x.stderr", "y.stdout"} {
		if !strings.Contains(got, "[kiln: "+name+" is not served") {
			t.Errorf("logs do not say %s was refused:\n%s", name, got)
		}
	}

	if b, err := os.ReadFile(secret); err != nil || string(b) != "root:SECRET-HASH:19000\n" {
		t.Errorf("the file linked to holds %q (%v), want it untouched", b, err)
	}

	spec2 := &job.Spec{
		ID:        mustID(t, "r/planted-artifact/1"),
		Processes: []job.Process{{Command: []string{"sh", "-c", "ln -s " + secret + " $KILN_OUTPUTS/model"}, Env: os.Environ()}},
		Artifacts: []string{"model"},
	}
	if err := h.b.Launch(t.Context(), spec2); err != nil {
		t.Fatal(err)
	}
	if st := h.waitExit(t, spec2); st.Succeeded() || !strings.Contains(st.OutputError, `"model"`) {
		t.Errorf("artifact linked out of the attempt: status %+v, want an output error naming it", st)
	}
}
