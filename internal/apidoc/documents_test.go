package apidoc

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"kiln.dev/kiln/api/openapi"
)

// exampleDocuments reads every document of the YAML files beneath
// examples/, as JSON values, by "file: kind".
func exampleDocuments(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}
	err := filepath.WalkDir("../../examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dec := yamlv3.NewDecoder(bytes.NewReader(raw))
		for {
			var node yamlv3.Node
			if err := dec.Decode(&node); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			text, err := yamlv3.Marshal(&node)
			if err != nil {
				return err
			}
			var v map[string]any
			if err := yaml.Unmarshal(text, &v); err != nil {
				return err
			}
			out[path+": "+v["apiVersion"].(string)+" "+v["kind"].(string)+" "+docName(v)] = v
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// docName is a document's metadata.name.
func docName(doc map[string]any) string {
	meta, _ := doc["metadata"].(map[string]any)
	n, _ := meta["name"].(string)
	return n
}

// TestExamplesAreTheirKindsDocuments checks every document of the
// project's examples against the served document's schemas: each is its
// kind's document, and one of RunnableDocument (what a JSON submission
// takes) or StoredDocument (what a JSON apply takes), exactly as its
// kind is, and not of the other.
func TestExamplesAreTheirKindsDocuments(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document)
	if err != nil {
		t.Fatal(err)
	}
	schema := func(name string) *openapi3.Schema {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Fatalf("the document has no schema %s", name)
		}
		return s.Value
	}
	kinds := map[string]Kind{}
	for _, k := range Kinds() {
		kinds[k.APIVersion+" "+k.Kind] = k
	}
	seen := map[bool]int{}
	for where, v := range exampleDocuments(t) {
		fields := strings.Fields(strings.SplitN(where, ": ", 2)[1])
		k, ok := kinds[fields[0]+" "+fields[1]]
		if !ok {
			continue // a kind kiln reads but does not describe for JSON bodies
		}
		if err := schema(documentName(k)).VisitJSON(v); err != nil {
			t.Errorf("%s is not a %s: %v", where, documentName(k), err)
		}
		want, other := runnableDocument, storedDocument
		if !runnable(k) {
			want, other = other, want
		}
		if err := schema(want).VisitJSON(v); err != nil {
			t.Errorf("%s is not exactly one of %s: %v", where, want, err)
		}
		if err := schema(other).VisitJSON(v); err == nil {
			t.Errorf("%s is a %s too", where, other)
		}
		seen[runnable(k)]++
	}
	t.Logf("%d runnable and %d stored documents", seen[true], seen[false])
	if seen[true] < 5 || seen[false] < 3 {
		t.Errorf("the examples gave %d runnable and %d stored documents; want the examples' workflows, jobs, runtimes, schedules and quotas", seen[true], seen[false])
	}
}
