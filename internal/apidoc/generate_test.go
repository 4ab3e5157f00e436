package apidoc

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"kiln.dev/kiln/api/openapi"
)

// TestGeneratedFilesAreCurrent generates the documents afresh and finds
// them exactly as committed in api/openapi: a change of the API's types
// or operations must come with go generate's output.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	t.Chdir("../..")
	files, err := Generate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("api", "openapi", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("api/openapi/%s is not what go generate ./api/openapi writes now: run it (%v)", name, err)
		}
	}
	committed, err := fs.Glob(openapi.Schemas, "schemas/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range committed {
		if _, ok := files[name]; !ok {
			t.Errorf("api/openapi/%s is generated no more: run go generate ./api/openapi", name)
		}
	}
}

// TestTheServedDocumentIsValidOpenAPI loads the embedded document, the one
// the server serves, with kin-openapi and validates it against the
// OpenAPI 3.0 specification, examples included.
func TestTheServedDocumentIsValidOpenAPI(t *testing.T) {
	if err := Validate(context.Background(), openapi.Document); err != nil {
		t.Fatal(err)
	}
}

// TestValidateRefusesABrokenDocument makes sure the check can fail: a
// document whose operation answers with a schema that is not there.
func TestValidateRefusesABrokenDocument(t *testing.T) {
	broken := bytes.Replace(openapi.Document, []byte(`"#/components/schemas/RunList"`), []byte(`"#/components/schemas/NoSuchList"`), 1)
	if bytes.Equal(broken, openapi.Document) {
		t.Fatal("the document has no reference to RunList to break")
	}
	if err := Validate(context.Background(), broken); err == nil {
		t.Error("a document referring to a schema it lacks was found valid")
	}
	wrong := bytes.Replace(openapi.Document, []byte(`"phase": "Succeeded",`), []byte(`"phase": "Done",`), 1)
	if bytes.Equal(wrong, openapi.Document) {
		t.Fatal("the document has no example run to break")
	}
	if err := Validate(context.Background(), wrong); err == nil {
		t.Error("a document whose example run has a phase kiln lacks was found valid")
	}
}

// TestEveryOperationHasAnIDASummaryAndAnAnswer checks what generated
// clients need of each operation: a unique ID to name the method by.
func TestEveryOperationHasAnIDASummaryAndAnAnswer(t *testing.T) {
	seen := map[string]string{}
	for _, op := range Operations() {
		where := op.Method + " " + op.Path
		if op.ID == "" || op.Summary == "" || len(op.Answers) == 0 || op.Role == "" || op.Tag == "" {
			t.Errorf("%s lacks its ID, summary, answer, role or tag", where)
		}
		if other, ok := seen[op.ID]; ok {
			t.Errorf("%s and %s share the operation ID %s", other, where, op.ID)
		}
		seen[op.ID] = where
	}
}
