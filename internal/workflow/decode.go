package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// DecodeWorkflow decodes doc as a Workflow. Every field that is not part of
// the schema is reported, with its path, as CodeUnknownField. A value
// YAML read as a boolean or number where a string belongs is reported as
// CodeBareValue and decoded as written: the Workflow comes back with that
// error, so that every other problem can be found too.
func DecodeWorkflow(doc *Document) (*apiv1.Workflow, error) {
	if err := checkHeader(doc, apiv1.KindWorkflow); err != nil {
		return nil, err
	}
	wf := &apiv1.Workflow{}
	if doc.tasks > 0 { // the decoder appends to the list it finds
		wf.Spec.Tasks = make([]apiv1.Task, 0, doc.tasks)
	}
	problems, ok := decodeStrict(doc, wf)
	return decoded(wf, problems, ok)
}

// decoded returns v with the problems of its decoding, or nil with them
// when it could not be decoded at all.
func decoded[T any](v *T, problems []error, ok bool) (*T, error) {
	if !ok {
		return nil, errors.Join(problems...)
	}
	return v, errors.Join(problems...)
}

func checkHeader(doc *Document, kind string) error {
	if doc.APIVersion != apiv1.APIVersion {
		return docError(doc, apiv1.CodeKind, "apiVersion", fmt.Sprintf("apiVersion is %q, want %q", doc.APIVersion, apiv1.APIVersion)+readsToo)
	}
	if doc.Kind != kind {
		return docError(doc, apiv1.CodeKind, "kind", fmt.Sprintf("kind is %q, want %q", doc.Kind, kind))
	}
	return nil
}

// decodeStrict unmarshals doc.JSON into out, refusing unknown fields and
// values of the wrong type, and returns every problem, each named with
// its path. checkShape finds them before anything decodes, and drops or
// mends each bad value, so that what can be decoded is, and every other
// check can go on: ok says out holds that decoding and the problems
// found leave it fit to check further.
func decodeStrict(doc *Document, out any) (problems []error, ok bool) {
	js, problems, fatal := checkShape(doc, reflect.TypeOf(out).Elem())
	err := decodeJSON(js, out, true)
	if err == nil {
		return problems, !fatal
	}
	if len(problems) > 0 {
		// What checkShape could not mend (it never should) is reported as
		// encoding/json says it.
		return append(problems, docError(doc, apiv1.CodeParse, "", err.Error())), false
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return []error{docError(doc, apiv1.CodeParse, typeErr.Field, fmt.Sprintf("is a %s, want %s", typeErr.Value, typeName(typeErr.Type)))}, false
	}
	return []error{docError(doc, apiv1.CodeParse, "", err.Error())}, false
}

func decodeJSON(js []byte, out any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	if strict {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(out)
}

// jsonFields maps the JSON names of typ's fields, inlined ones included, to their types.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			for k, v := range jsonFields(f.Type) {
				fields[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name != "-" {
			fields[name] = f.Type
		}
	}
	return fields
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func typeName(t reflect.Type) string {
	if t == quantityType || t == kubeQuantityType {
		return "quantity"
	}
	switch t.Kind() {
	case reflect.Slice:
		return "list"
	case reflect.Struct, reflect.Map:
		return "mapping"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.Kind().String()
}

func docError(doc *Document, code apiv1.Code, field, msg string) *apiv1.Error {
	return &apiv1.Error{Code: code, File: doc.File, Object: doc.Object(), Field: field, Message: msg}
}

// readsToo says which other API groups kiln reads, for an error about an
// apiVersion it does not.
const readsToo = "; kiln also reads trainer.kubeflow.org/v1alpha1 (TrainJob, TrainingRuntime, ClusterTrainingRuntime)" +
	", kubeflow.org/v1 (PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob, PaddleJob)" +
	" and argoproj.io/v1alpha1 (Workflow, WorkflowTemplate, ClusterWorkflowTemplate)"
