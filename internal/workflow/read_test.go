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

// endless is a reader that never ends, as a stdin piped from yes would be.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// A file past MaxFileSize is refused before it is read: by its size when
// it has one, after MaxFileSize bytes when it is a stream.
func TestReadIsBounded(t *testing.T) {
	t.Parallel()
	big := filepath.Join(t.TempDir(), "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(50 << 20); err != nil { // sparse: 50 MB that cost nothing to write
		t.Fatal(err)
	}
	f.Close()
	_, loadErr := Load([]string{big}, nil)
	_, srcErr := ReadSource(big, nil)
	_, stdinErr := ReadSource("-", endless{})
	_, readErr := Read("piped.yaml", endless{})
	for name, err := range map[string]error{"Load": loadErr, "ReadSource": srcErr, "ReadSource of stdin": stdinErr, "Read": readErr} {
		errs := apiv1.Errors(err)
		if len(errs) != 1 || errs[0].Code != apiv1.CodeOutOfRange || errs[0].File == "" || !strings.Contains(errs[0].Message, "at most 4194304 bytes") {
			t.Errorf("%s = %v; want one %s naming the file and the bound", name, err, apiv1.CodeOutOfRange)
		}
	}
}

// A key written twice is refused, naming both lines, wherever the mapping
// is: YAML would silently keep the later one.
func TestReadRefusesDuplicateKeys(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		text, field, says string
	}{
		"a task's command": {
			text:  header + "spec:\n  tasks:\n  - name: a\n    command: [echo]\n    args: [x]\n    command: [rm, -rf, /]\n",
			field: "spec.tasks[0].command", says: `key "command" appears twice: lines 7 and 9`,
		},
		"one line of flow style": {
			text:  header + "spec: {tasks: [{name: a, command: [x], name: b}]}\n",
			field: "spec.tasks[0].name", says: `key "name" appears twice: line 4, columns 17 and 40`,
		},
		"the top level": {
			text:  header + "spec: {tasks: [{name: a, command: [x]}]}\nkind: TrainJob\n",
			field: "kind", says: `key "kind" appears twice: lines 2 and 5`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			docs, err := Read("wf.yaml", strings.NewReader(tc.text))
			errs := apiv1.Errors(err)
			if len(docs) != 0 || len(errs) != 1 || errs[0].Code != apiv1.CodeDuplicateKey || errs[0].Field != tc.field || errs[0].Message != tc.says {
				t.Errorf("Read = %d documents, %v; want none and %s at %s saying %q", len(docs), err, apiv1.CodeDuplicateKey, tc.field, tc.says)
			}
		})
	}
}

// A file of more documents than anyone writes by hand is refused, whatever they hold.
func TestReadBoundsDocuments(t *testing.T) {
	t.Parallel()
	for what, file := range map[string]string{
		"1001 documents":       strings.Repeat("a: 1\n---\n", maxDocuments+1),
		"2000 empty documents": strings.Repeat("---\n", 2000) + "a: 1\n",
	} {
		_, err := Read("many.yaml", strings.NewReader(file))
		if errs := apiv1.Errors(err); len(errs) != 1 || errs[0].Code != apiv1.CodeOutOfRange || !strings.Contains(errs[0].Message, "more than 1000 documents") {
			t.Errorf("Read of %s = %v; want one %s for too many documents", what, err, apiv1.CodeOutOfRange)
		}
	}
	exact := strings.TrimSuffix(strings.Repeat("a: 1\n---\n", maxDocuments), "---\n")
	if docs, err := Read("exact.yaml", strings.NewReader(exact)); len(docs) != maxDocuments || apiv1.Errors(err) != nil && apiv1.Errors(err)[0].Code == apiv1.CodeOutOfRange {
		t.Errorf("Read of exactly %d documents = %d, %v; want them all", maxDocuments, len(docs), err)
	}
}
