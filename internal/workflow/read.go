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

	yaml3 "go.yaml.in/yaml/v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Bounds of what kiln reads, checked before anything is parsed.
const (
	// MaxFileSize bounds a file of specs, in bytes: 4 MiB, as much as a
	// server takes in one request.
	MaxFileSize = 4 << 20
	// maxDocuments bounds the documents of one file.
	maxDocuments = 1000
)

// Document is one YAML document of a file.
type Document struct {
	// File is the path it was read from ("-" for standard input).
	File string
	// Index counts documents in the file from 0.
	Index int
	// Line is the line of File the document starts at, from 1 (0: not
	// read from a file by Read): errors about it say where they are.
	Line int
	// APIVersion, Kind and Name are read from the document's header.
	APIVersion, Kind, Name string
	// Namespace is its metadata.namespace as written: the project it goes
	// to (see NamespaceOf).
	Namespace string
	// JSON is the document converted to JSON.
	JSON []byte
	// Raw is the document as written, for errors that need its spelling.
	Raw []byte
	// From is set on a document kiln translated from another API group
	// (Translate): what the user wrote, and how its fields are named.
	From *Origin

	// tree is Raw parsed again when something asks for it (an error's
	// line, a shape problem), kept for the copies of the document; nil for
	// a document not read by Read. Read drops the tree it checks the
	// document on before converting it: a 100,000-task spec's tree is
	// about 90 MB, and a valid document needs it no further.
	tree *lazyTree
	// written is the top value of the YAML the user wrote, for a document
	// translated from it, whose fields errors name as written.
	written *yaml3.Node
	// tasks is how many tasks its YAML lists under spec.tasks (0: none
	// or unknown): decoding sizes the list once, where growing it as it
	// decodes allocated twice its size and kept up to a third unused.
	tasks int
	// runs caches the workflows a Workflow document's tasks run (runs).
	runs *[]string
}

// Object names the document for error messages: "Workflow/train" or, when
// it has no name, "document 2".
func (d *Document) Object() string {
	kind := d.Kind
	if d.From != nil {
		kind = d.From.Kind
	}
	if kind != "" && d.Name != "" {
		return kind + "/" + d.Name
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
		if err := statFile(p, f); err != nil {
			f.Close()
			errs = append(errs, err)
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

// statFile refuses a directory, and a file larger than MaxFileSize
// before a byte of it is read.
func statFile(name string, f *os.File) error {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return &apiv1.Error{Code: apiv1.CodeRead, File: name, Message: "cannot read the file: " + pathError(err)}
	case fi.IsDir():
		return &apiv1.Error{Code: apiv1.CodeRead, File: name, Message: "is a directory, not a file", Hint: "name the YAML files in it"}
	case fi.Mode().IsRegular() && fi.Size() > MaxFileSize:
		return tooLarge(name, fi.Size())
	}
	return nil
}

func tooLarge(name string, size int64) error {
	says := fmt.Sprintf("is %d bytes", size)
	if size < 0 {
		says = "is larger than that"
	}
	return &apiv1.Error{
		Code: apiv1.CodeOutOfRange, File: name,
		Message: fmt.Sprintf("%s: kiln reads files of at most %d bytes (%d MiB)", says, MaxFileSize, MaxFileSize>>20),
		Hint:    "split the file, or keep large data out of specs and read it from a task",
	}
}

// readBounded reads r, at most MaxFileSize bytes of it: more is
// KLN-1023, and an error reading it KLN-1020, naming file.
func readBounded(file string, r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	switch {
	case err != nil:
		return nil, &apiv1.Error{Code: apiv1.CodeRead, File: file, Message: "cannot read the file: " + pathError(err)}
	case len(b) > MaxFileSize:
		return nil, tooLarge(file, -1)
	}
	return b, nil
}

// ReadSource reads file name ("-": stdin) as it is to be submitted, at
// most MaxFileSize bytes of it. A file that cannot be read is KLN-1020,
// one too large KLN-1023, naming it.
func ReadSource(name string, stdin io.Reader) (apiv1.SourceFile, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return apiv1.SourceFile{}, &apiv1.Error{Code: apiv1.CodeRead, File: name, Message: "cannot read the file: " + pathError(err)}
		}
		defer f.Close()
		if err := statFile(name, f); err != nil {
			return apiv1.SourceFile{}, err
		}
		r = f
	}
	b, err := readBounded(name, r)
	if err != nil {
		return apiv1.SourceFile{}, err
	}
	return apiv1.SourceFile{Name: filepath.Clean(name), Data: b}, nil
}

// Read splits r into documents, reading at most MaxFileSize bytes and
// maxDocuments documents, empty ones included. Empty documents are then
// skipped; a file that holds none at all is an error.
func Read(file string, r io.Reader) ([]Document, error) {
	data, err := readBounded(file, r)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []Document
	var errs []error
	lines := lineCounter{data: data}
	for index, read := 0, 0; ; index++ {
		raw, err := reader.Read()
		if read++; read > maxDocuments && !errors.Is(err, io.EOF) {
			return nil, &apiv1.Error{
				Code: apiv1.CodeOutOfRange, File: file,
				Message: fmt.Sprintf("the file holds more than %d documents (empty ones count)", maxDocuments),
				Hint:    "split the file",
			}
		}
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
		doc, err := parseDocument(file, index, lines.start(raw), raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, doc)
	}
}

// parseDocument parses one document strictly: its size and depth with
// aliases expanded are bounded before it is converted, and a key written
// twice in a mapping, or a number that is not finite, is an error.
func parseDocument(file string, index, line int, raw []byte) (Document, error) {
	doc := Document{File: file, Index: index, Line: line}
	var root yaml3.Node
	if err := yaml3.Unmarshal(raw, &root); err != nil {
		return doc, parseError(&doc, err)
	}
	problems, tooBig := scanDocument(&root)
	if tooBig == nil {
		tooBig = tooManyTasks(&root)
		doc.tasks = countTasks(&root)
	}
	if tooBig != nil {
		doc.Kind, doc.Name = nodeHead(&root)
		return doc, withDoc(&doc, []*apiv1.Error{tooBig})
	}
	kind, name := nodeHead(&root)
	root = yaml3.Node{} // the tree is garbage before the conversion builds its own
	js, err := yaml.YAMLToJSON(raw)
	switch {
	case err != nil && len(problems) > 0: // what the scan found is why
		doc.Kind, doc.Name = kind, name
		return doc, withDoc(&doc, problems)
	case err != nil:
		return doc, &apiv1.Error{Code: apiv1.CodeParse, File: file, Object: doc.Object(), Message: err.Error()}
	}
	var head struct {
		APIVersion, Kind any
		Metadata         struct{ Name, Namespace any } `json:"metadata"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return doc, &apiv1.Error{Code: apiv1.CodeParse, File: file, Object: doc.Object(), Message: "document is not a mapping with apiVersion, kind and metadata"}
	}
	doc.JSON, doc.Raw, doc.tree = js, raw, &lazyTree{raw: raw}
	doc.APIVersion, doc.Kind, doc.Name = scalarText(head.APIVersion), scalarText(head.Kind), scalarText(head.Metadata.Name)
	doc.Namespace = scalarText(head.Metadata.Namespace)
	if _, ok := head.Metadata.Name.(string); !ok && doc.Name != "" {
		doc.Name = rawName(raw)
	}
	return doc, withDoc(&doc, problems)
}

// withDoc sets doc's file, object and the place of each field on
// problems and joins them.
func withDoc(doc *Document, problems []*apiv1.Error) error {
	errs := make([]error, len(problems))
	for i, p := range problems {
		p.File, p.Object = doc.File, doc.Object()
		doc.locate(p)
		errs[i] = p
	}
	return errors.Join(errs...)
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

// blank reports whether a document holds nothing but space, comments
// and the markers that start and end documents.
func blank(raw []byte) bool {
	for line := range bytes.Lines(raw) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) && !bytes.Equal(t, []byte("...")) {
			return false
		}
	}
	return true
}
