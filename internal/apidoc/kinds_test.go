package apidoc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"kiln.dev/kiln/api/openapi"
)

// compileKinds compiles the schema of every kind, as an editor would.
func compileKinds(t *testing.T) *jsonschema.Schema {
	t.Helper()
	raw, err := openapi.Schemas.ReadFile("schemas/" + AllKinds)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("file:///"+AllKinds, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("file:///" + AllKinds)
	if err != nil {
		t.Fatalf("the schema of every kind does not compile: %v", err)
	}
	return s
}

// specDocument is one YAML document of a kind kiln reads, and where it is.
type specDocument struct {
	where string
	json  []byte
}

// yamlBlock finds the YAML blocks of a Markdown file.
var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// specDocuments reads every document with an apiVersion and a kind from
// the examples and from the YAML blocks of the README and docs/.
func specDocuments(t *testing.T) []specDocument {
	t.Helper()
	var texts []specDocument
	yamls, _ := filepath.Glob("../../examples/*/*.yaml")
	top, _ := filepath.Glob("../../examples/*.yaml")
	for _, p := range append(top, yamls...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, specDocument{p, b})
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, p := range append(docs, "../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range yamlBlock.FindAllSubmatch(b, -1) {
			texts = append(texts, specDocument{fmt.Sprintf("%s, YAML block %d", p, i+1), m[1]})
		}
	}
	var out []specDocument
	for _, text := range texts {
		for i, part := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(text.json), -1) {
			js, err := yaml.YAMLToJSON([]byte(part))
			if err != nil || !bytes.Contains(js, []byte(`"apiVersion"`)) || !bytes.Contains(js, []byte(`"kind"`)) {
				continue // not a document of a kind: a fragment, or another file's YAML
			}
			out = append(out, specDocument{fmt.Sprintf("%s, document %d", text.where, i+1), js})
		}
	}
	return out
}

// TestKindSchemasTakeEveryExample validates every spec of the examples,
// the README and docs/ against the schema editors are told to use: a
// schema that flags a valid spec is worse than none.
func TestKindSchemasTakeEveryExample(t *testing.T) {
	s := compileKinds(t)
	docs := specDocuments(t)
	if len(docs) < 30 {
		t.Fatalf("found %d spec documents in examples/, README.md and docs/; expected more", len(docs))
	}
	for _, d := range docs {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(d.json))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: %v", d.where, err)
		}
	}
}

// TestKindSchemasFlagMistakes checks that the schema catches what kiln
// validate refuses, at the field kiln names.
func TestKindSchemasFlagMistakes(t *testing.T) {
	s := compileKinds(t)
	for _, c := range []struct{ name, doc, where string }{
		{"a misspelt field", `{"apiVersion": "kiln.dev/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"}, "spec": {"tasks": [{"name": "a", "comand": ["true"]}]}}`, "/spec/tasks/0"},
		{"no tasks", `{"apiVersion": "kiln.dev/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"}, "spec": {}}`, "/spec"},
		{"an unknown kind", `{"apiVersion": "kiln.dev/v1alpha1", "kind": "Pipeline", "metadata": {"name": "w"}}`, "/kind"},
		{"a trigger rule kiln lacks", `{"apiVersion": "kiln.dev/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"}, "spec": {"tasks": [{"name": "a", "command": ["true"], "trigger": "always"}]}}`, "/spec/tasks/0/trigger"},
		{"a Trainer TrainJob field of kiln's own", `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "t"}, "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNode": 2}}}`, "/spec/trainer"},
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		err = s.Validate(inst)
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: the schema took it (%v)", c.name, err)
			continue
		}
		if !strings.Contains(fmt.Sprintf("%#v", ve), c.where) {
			t.Errorf("%s: the schema's error does not point at %s:\n%#v", c.name, c.where, ve)
		}
	}
}
