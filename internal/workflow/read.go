package workflow

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Document is one YAML document of a file.
type Document struct {
	// File is the path it was read from ("-" for standard input).
	File string
	// Index counts documents in the file from 0.
	Index int
	// APIVersion, Kind and Name are read from the document's header.
	APIVersion, Kind, Name string
	// JSON is the document converted to JSON.
	JSON []byte
	// Raw is the document as written, for errors that need its spelling.
	Raw []byte
}

// Object names the document for error messages: "Workflow/train" or, when
// it has no name, "document 2".
func (d *Document) Object() string {
	if d.Kind != "" && d.Name != "" {
		return d.Kind + "/" + d.Name
	}
	return fmt.Sprintf("document %d", d.Index+1)
}

// ReadFiles reads every document of every file, in order. It returns every
// document it could read and a joined error for those it could not.
func ReadFiles(paths []string) ([]Document, error) {
	var docs []Document
	errs := []error{Repeated(paths)}
	for _, p := range unique(paths) {
		f, err := os.Open(p)
		if err != nil {
			errs = append(errs, &apiv1.Error{Code: apiv1.CodeRead, File: p, Message: "cannot read the file: " + pathError(err)})
			continue
		}
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			f.Close()
			errs = append(errs, &apiv1.Error{Code: apiv1.CodeRead, File: p, Message: "is a directory, not a file", Hint: "name the YAML files in it"})
			continue
		}
		d, err := Read(p, f)
		f.Close()
		docs = append(docs, d...)
		errs = append(errs, err)
	}
	return docs, errors.Join(errs...)
}

// Repeated is KLN-1020 for each file named more than once: its documents
// would count twice.
func Repeated(paths []string) error {
	seen := map[string]bool{}
	var errs []error
	for _, p := range paths {
		c := filepath.Clean(p)
		if seen[c] {
			errs = append(errs, &apiv1.Error{Code: apiv1.CodeRead, File: p, Message: "is named more than once", Hint: "name each file once"})
		}
		seen[c] = true
	}
	return errors.Join(errs...)
}

// unique returns paths without the ones named before.
func unique(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range paths {
		if c := filepath.Clean(p); !seen[c] {
			seen[c] = true
			out = append(out, p)
		}
	}
	return out
}

// ReadSource reads file name ("-": stdin) as it is to be submitted. A
// file that cannot be read is KLN-1020, naming it.
func ReadSource(name string, stdin io.Reader) (apiv1.SourceFile, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return apiv1.SourceFile{}, &apiv1.Error{Code: apiv1.CodeRead, File: name, Message: "cannot read the file: " + pathError(err)}
	}
	return apiv1.SourceFile{Name: filepath.Clean(name), Data: b}, nil
}

// Read splits r into documents. Empty documents are skipped; a file that
// holds none at all is an error.
func Read(file string, r io.Reader) ([]Document, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var docs []Document
	var errs []error
	for index := 0; ; index++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			if len(docs) == 0 && len(errs) == 0 {
				errs = append(errs, &apiv1.Error{
					Code: apiv1.CodeRunnable, File: file, Message: "the file holds no document",
					Hint: "put one Workflow or TrainJob in it; TrainingRuntimes may come with it",
				})
			}
			return docs, errors.Join(errs...)
		}
		if err != nil {
			return docs, errors.Join(append(errs, &apiv1.Error{Code: apiv1.CodeParse, File: file, Message: err.Error()})...)
		}
		if blank(raw) {
			index--
			continue
		}
		doc, err := parseDocument(file, index, raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, doc)
	}
}

func parseDocument(file string, index int, raw []byte) (Document, error) {
	doc := Document{File: file, Index: index}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return doc, &apiv1.Error{Code: apiv1.CodeParse, File: file, Object: doc.Object(), Message: err.Error()}
	}
	var head struct {
		APIVersion, Kind any
		Metadata         struct{ Name any } `json:"metadata"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return doc, &apiv1.Error{Code: apiv1.CodeParse, File: file, Object: doc.Object(), Message: "document is not a mapping with apiVersion, kind and metadata"}
	}
	doc.JSON, doc.Raw = js, raw
	doc.APIVersion, doc.Kind, doc.Name = scalarText(head.APIVersion), scalarText(head.Kind), scalarText(head.Metadata.Name)
	if _, ok := head.Metadata.Name.(string); !ok && doc.Name != "" {
		doc.Name = rawName(raw)
	}
	return doc, nil
}

// scalarText is a header value as text, whatever YAML read it as (a name
// n is read as false; decoding reports that, naming the field).
func scalarText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case map[string]any, []any:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// pathError is err without the path the error names already.
func pathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// blank reports whether a document holds nothing but space and comments.
func blank(raw []byte) bool {
	for line := range bytes.Lines(raw) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			return false
		}
	}
	return true
}
