package hostile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/app"
	"kiln.dev/kiln/internal/workflow"
)

// hung is how long refusing one case may take before the test calls it
// hung. It is no speed target (each case takes milliseconds alone, and
// seconds under the race detector on a loaded machine): it only turns a
// refusal that never ends, such as reading endless input, into a failure
// that names its case rather than the package's timeout.
const hung = 3 * time.Minute

// want is one error a case must bring.
type want struct {
	code  apiv1.Code
	field string
}

func (w want) String() string { return string(w.code) + " " + w.field }

func TestHostileSpecsAreRefused(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) < 60 {
		t.Fatalf("found %d cases in testdata (%v), want at least 60", len(files), err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			t.Parallel()
			wants := readWants(t, file)
			refuse(t, file, nil, wants)
		})
	}
}

// Cases too large to keep as files: what a file holds is made here.
func TestGeneratedHostileSpecsAreRefused(t *testing.T) {
	t.Parallel()
	tooBig := []want{{apiv1.CodeOutOfRange, "-"}}
	cases := map[string]struct {
		write func(t *testing.T, path string)
		stdin io.Reader
		wants []want
	}{
		"a 50 MB file": {write: func(t *testing.T, path string) {
			sparse(t, path, 50<<20)
		}, wants: tooBig},
		"a file one byte past the bound, every byte written": {write: func(t *testing.T, path string) {
			write(t, path, bytes.Repeat([]byte("#"), workflow.MaxFileSize+1))
		}, wants: tooBig},
		"standard input that never ends": {stdin: endless{}, wants: tooBig},
		"a thousand and one documents": {write: func(t *testing.T, path string) {
			write(t, path, bytes.Repeat([]byte("apiVersion: kiln.dev/v1alpha1\nkind: TrainingRuntime\n---\n"), 1001))
		}, wants: tooBig},
		"two thousand empty documents and a workflow": {write: func(t *testing.T, path string) {
			write(t, path, append(bytes.Repeat([]byte("---\n"), 2000), "apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec: {tasks: [{name: a, command: [echo]}]}\n"...))
		}, wants: tooBig},
		"a hundred and five thousand tasks": {write: func(t *testing.T, path string) {
			var b bytes.Buffer
			b.WriteString("apiVersion: kiln.dev/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  tasks:\n")
			for i := range 105000 {
				fmt.Fprintf(&b, "  - {name: t%d, command: [echo]}\n", i)
			}
			write(t, path, b.Bytes())
		}, wants: []want{{apiv1.CodeOutOfRange, "spec.tasks"}}},
		"a file of no bytes at all": {write: func(t *testing.T, path string) {
			write(t, path, nil)
		}, wants: []want{{apiv1.CodeRunnable, "-"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := "-"
			if tc.write != nil {
				path = filepath.Join(t.TempDir(), "case.yaml")
				tc.write(t, path)
			}
			refuse(t, path, tc.stdin, tc.wants)
		})
	}
}

// An alias bomb is refused before any of it is expanded: the memory it
// takes is a small multiple of its size. The test does not run in
// parallel, so that what the process allocates is its own.
func TestAliasBombStaysSmall(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := workflow.Load([]string{filepath.Join("testdata", "alias-billion-laughs.yaml")}, nil)
	runtime.ReadMemStats(&after)
	if apiv1.CodeOf(err) != apiv1.CodeOutOfRange {
		t.Errorf("Load = %v, want %s", err, apiv1.CodeOutOfRange)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("refusing an alias bomb allocated %d MiB", alloc>>20)
	}
}

// refuse submits file (stdin when "-") to a fresh embedded kiln as kiln
// run does, and checks that it is refused, without hanging, with every error
// wanted, each a coded error, and that the store holds no run after.
func refuse(t *testing.T, file string, stdin io.Reader, wants []want) {
	t.Helper()
	a, err := app.Open(t.Context(), app.Config{
		Home:              t.TempDir(),
		Log:               slog.New(slog.DiscardHandler),
		SupervisorCommand: []string{"/bin/false"}, // nothing may start
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	done := make(chan error, 1)
	go func() { done <- submit(t, a, file, stdin) }()
	select {
	case err = <-done:
	case <-time.After(hung):
		t.Fatalf("refusing it did not end within %v: it hangs", hung)
	}
	if err == nil {
		t.Fatalf("it was accepted; want %v", wants)
	}
	got := map[want]bool{}
	for _, e := range leaves(err) {
		var coded *apiv1.Error
		if !errors.As(e, &coded) || coded.Code == "" || coded.Message == "" {
			t.Errorf("error %q (%T) is not a coded *apiv1.Error with a message", e, e)
			continue
		}
		field := coded.Field
		if field == "" {
			field = "-"
		}
		got[want{coded.Code, field}] = true
	}
	for _, w := range wants {
		if !got[w] {
			t.Errorf("errors lack %s; got:\n%v", w, err)
		}
	}
	list, err := a.ListRuns(t.Context(), apiv1.RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("the refused spec left %d runs in the store", len(list.Items))
	}
}

// submit reads file and submits it as kiln run does (cli.readSubmission).
func submit(t *testing.T, a *app.App, file string, stdin io.Reader) error {
	t.Helper()
	src, err := workflow.ReadSource(file, stdin)
	if err != nil {
		return err
	}
	_, err = a.Submit(t.Context(), apiv1.Submission{Files: []apiv1.SourceFile{src}})
	return err
}

// leaves returns the errors err joins, each one that is not itself a join.
func leaves(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// readWants reads the "# want: CODE FIELD" lines at the top of file.
func readWants(t *testing.T, file string) []want {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wants []want
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := strings.CutPrefix(s.Text(), "# want: ")
		if !ok {
			break
		}
		code, field, ok := strings.Cut(strings.TrimSpace(rest), " ")
		if !ok {
			t.Fatalf("%s: want line %q is not CODE FIELD", file, s.Text())
		}
		wants = append(wants, want{apiv1.Code(code), field})
	}
	if len(wants) == 0 {
		t.Fatalf("%s starts with no # want: line", file)
	}
	return wants
}

// endless is standard input that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sparse makes a file of size bytes that takes no room on disk.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}
