package workflow

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// Origin is where a translated document came from: a document of another
// API group (Kubeflow Trainer's, training-operator's) that kiln reads as
// one of its own kinds.
type Origin struct {
	// APIVersion and Kind are the document's as written.
	APIVersion, Kind string
	// Namespace is its metadata.namespace, if it has one.
	Namespace string
	// Field names, in the document as written, a field of the translation.
	Field func(field string) string
	// Ignored lists the fields a backend reads but does not honour.
	Ignored []Ignored
}

// Ignored is a field kiln reads but does not act on, on some backends or
// on all: a warning when a run is submitted, never silence.
type Ignored struct {
	// Field is the field's path in the document as written.
	Field string `json:"field"`
	// Backends ignore it ("local", "kubernetes", "slurm"); empty: every backend.
	Backends []string `json:"backends,omitempty"`
	// Reason says why, and what kiln does instead.
	Reason string `json:"reason"`
	// Note: kiln honours the field, its own way, which Reason says; it is
	// named so that nothing changes in silence, not as ignored.
	Note bool `json:"note,omitempty"`
}

// Message is i as one line for people: "FIELD is ignored on the local
// backend: REASON", or, for a note, "note: FIELD on the local backend:
// REASON".
func (i Ignored) Message() string {
	if i.Note {
		on := ""
		if len(i.Backends) > 0 {
			on = " " + i.Where()
		}
		return "note: " + i.Field + on + ": " + i.Reason
	}
	return i.Field + " is ignored " + i.Where() + ": " + i.Reason
}

// Where says on which backends i is ignored (or, for a note, applies).
func (i Ignored) Where() string {
	if len(i.Backends) == 0 {
		return "on every backend"
	}
	return "on the " + strings.Join(i.Backends, " and ") + " backend"
}

// IgnoredOn lists what of i the named backend ignores.
func IgnoredOn(backend string, list []Ignored) []Ignored {
	var out []Ignored
	for _, i := range list {
		if len(i.Backends) == 0 || slices.Contains(i.Backends, backend) {
			out = append(out, i)
		}
	}
	return out
}

// translator reads the documents of one API group as kiln's own.
type translator struct {
	apiVersion string
	// kinds translates each kind it reads; a kind it does not know is an
	// error naming the kinds it does.
	kinds map[string]translateFunc
}

// translateFunc translates one document into the kiln documents that
// stand for it: one, or a job and the runtime it runs with.
type translateFunc func(doc *Document) ([]Document, error)

// one is a translation into a single document.
func one(f func(doc *Document) (*Document, error)) translateFunc {
	return func(doc *Document) ([]Document, error) {
		d, err := f(doc)
		if d == nil {
			return nil, err
		}
		return []Document{*d}, err
	}
}

// translators lists the API groups kiln reads besides its own.
func translators() []translator {
	return []translator{trainerGroup(), operatorGroup(), argoGroup()}
}

// Translate returns docs with every document of another API group that
// kiln reads replaced by its translation into kiln's own kinds, and the
// problems found translating. A document that cannot be translated is
// dropped; one of kiln's own group, or of a group no translator reads,
// is kept as it is (checking it reports what is wrong with it).
func Translate(docs []Document) ([]Document, error) {
	out, err := translate(docs)
	return argoSameFiles(out), err
}

// translate is Translate for kiln apply: an Argo WorkflowTemplate stays a
// template to store, even beside a Workflow that calls it.
func translate(docs []Document) ([]Document, error) {
	var out []Document
	var errs []error
	for i := range docs {
		t, ok := translatorOf(docs[i].APIVersion)
		if !ok {
			out = append(out, docs[i])
			continue
		}
		tr, found := t.kinds[docs[i].Kind]
		if !found {
			errs = append(errs, docError(&docs[i], apiv1.CodeKind, "kind",
				"kind "+quote(docs[i].Kind)+" of "+t.apiVersion+" is not one kiln reads: it reads "+kindList(t)))
			continue
		}
		d, err := tr(&docs[i])
		errs = append(errs, err)
		out = append(out, d...)
	}
	err := errors.Join(errs...)
	locateAll(docs, err) // named as written: the document read is where they are
	return out, err
}

func translatorOf(apiVersion string) (translator, bool) {
	if apiVersion == apiv1.APIVersion {
		return translator{}, false // kiln's own: the common case, nothing to build
	}
	for _, t := range translators() {
		if t.apiVersion == apiVersion {
			return t, true
		}
	}
	return translator{}, false
}

func kindList(t translator) string {
	var names []string
	for k := range t.kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// translated returns the kiln document that stands for doc: obj, of
// kiln's kind, written out as if the user had written it, and knowing
// its origin.
func translated(doc *Document, kind string, obj any, from *Origin) (*Document, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, docError(doc, apiv1.CodeParse, "", err.Error())
	}
	raw, err := yaml.JSONToYAML(js)
	if err != nil {
		return nil, docError(doc, apiv1.CodeParse, "", err.Error())
	}
	from.APIVersion, from.Kind = doc.APIVersion, doc.Kind
	return &Document{
		File: doc.File, Index: doc.Index, Line: doc.Line, APIVersion: apiv1.APIVersion, Kind: kind, Name: doc.Name, Namespace: doc.Namespace,
		JSON: js, Raw: raw, From: from, written: writtenNode(doc),
	}, nil
}

// AsWritten renames the fields of the errors in err that are about
// translated documents of docs to the fields as the user wrote them.
func AsWritten(docs []Document, err error) error { return asWritten(docs, err) }

func asWritten(docs []Document, err error) error {
	for _, e := range apiv1.Errors(err) {
		for i := range docs {
			d := &docs[i]
			if d.From != nil && d.From.Field != nil && e.File == d.File && e.Object == d.Object() {
				e.Field = d.From.Field(e.Field)
			}
		}
	}
	locateAll(docs, err)
	return err
}

// IgnoredFields lists the fields of the translated documents among docs
// that some backend ignores.
func IgnoredFields(docs ...*Document) []Ignored {
	var out []Ignored
	for _, d := range docs {
		if d != nil && d.From != nil {
			out = append(out, d.From.Ignored...)
		}
	}
	return out
}

// NamespaceOf is the metadata.namespace of doc, or of the document a
// translated doc came from: the project it goes to ("" when it names
// none).
func NamespaceOf(doc *Document) string {
	switch {
	case doc == nil:
		return ""
	case doc.From != nil && doc.From.Namespace != "":
		return doc.From.Namespace
	}
	return doc.Namespace
}
