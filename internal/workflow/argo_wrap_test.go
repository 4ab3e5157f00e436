package workflow

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestArgoWrapperKeepsStatusAndLeavesNoFiles runs the command wrapper of a
// script whose result is read: the program's exit status is the
// wrapper's, its output is the result, and its temporary files are gone
// however it ended.
func TestArgoWrapperKeepsStatusAndLeavesNoFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		source string
		rc     int
		result string
	}{
		{source: "echo heads\n", rc: 0, result: "heads"},
		{source: "echo tails; exit 3\n", rc: 3, result: "tails"},
	} {
		tmp, outputs := t.TempDir(), t.TempDir()
		w := argoWrap{source: tc.source, result: true}
		argv := w.command([]string{"sh"})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "KILN_OUTPUTS="+outputs)
		err := cmd.Run()
		rc := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			rc = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("running the wrapper: %v", err)
		}
		result, _ := os.ReadFile(filepath.Join(outputs, "result"))
		left, _ := os.ReadDir(tmp)
		if rc != tc.rc || string(result) != tc.result || len(left) != 0 {
			t.Errorf("%q: exit %d, result %q, %d files left in TMPDIR; want exit %d, result %q, none", tc.source, rc, result, len(left), tc.rc, tc.result)
		}
	}
}
