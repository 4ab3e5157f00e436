package workflow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// argoFile converts the Argo test document name, checking the result as
// kiln would, and decodes the workflows it becomes, by name.
func argoFile(t *testing.T, name string) (map[string]*apiv1.Workflow, []Ignored) {
	t.Helper()
	path := filepath.Join("testdata", "argo", name)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return argoText(t, path, string(b))
}

func argoText(t *testing.T, path, text string) (map[string]*apiv1.Workflow, []Ignored) {
	t.Helper()
	docs, err := Read(path, strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	out, ignored, err := Convert([]string{path}, docs)
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	wfs := map[string]*apiv1.Workflow{}
	for _, d := range out {
		wf := &apiv1.Workflow{}
		if err := json.Unmarshal(d.JSON, wf); err != nil {
			t.Fatal(err)
		}
		wfs[d.Name] = wf
	}
	return wfs, ignored
}

// argoErr converts text, which must be refused, and returns the errors.
func argoErr(t *testing.T, text string) []*apiv1.Error {
	t.Helper()
	docs, err := Read("wf.yaml", strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	_, _, err = Convert([]string{"wf.yaml"}, docs)
	if err == nil {
		t.Fatal("Convert accepted the document")
	}
	return apiv1.Errors(err)
}

func TestArgoDump(t *testing.T) {
	for _, name := range []string{"hello.yaml", "steps.yaml", "coinflip.yaml", "dag-nested.yaml"} {
		wfs, ign := argoFile(t, name)
		for n, wf := range wfs {
			b, _ := json.MarshalIndent(wf, "", " ")
			t.Logf("%s %s:\n%s", name, n, b)
		}
		t.Logf("ignored: %v", ign)
	}
}
