package workflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// A directory and a file named twice are KLN-1020 naming the path, not a
// YAML error nor two runnables in one file.
func TestReadFilesRefusesDirectoriesAndRepeats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wf := filepath.Join(dir, "wf.yaml")
	if err := os.WriteFile(wf, []byte(header+"spec: {tasks: [{name: a, command: [\"true\"]}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		paths []string
		says  string
	}{
		"a directory":        {paths: []string{dir}, says: "is a directory"},
		"a file named twice": {paths: []string{wf, filepath.Join(dir, ".", "wf.yaml")}, says: "is named more than once"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(tc.paths, nil)
			errs := apiv1.Errors(err)
			if len(errs) != 1 || errs[0].Code != apiv1.CodeRead || !strings.Contains(errs[0].Message, tc.says) {
				t.Errorf("Load(%v) = %v; want one %s saying %q", tc.paths, err, apiv1.CodeRead, tc.says)
			}
		})
	}
}
