package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
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
		return docError(doc, apiv1.CodeKind, "apiVersion", fmt.Sprintf("apiVersion is %q, want %q", doc.APIVersion, apiv1.APIVersion))
	}
	if doc.Kind != kind {
		return docError(doc, apiv1.CodeKind, "kind", fmt.Sprintf("kind is %q, want %q", doc.Kind, kind))
	}
	return nil
}

// decodeStrict unmarshals doc.JSON into out, refusing unknown fields and
// values of the wrong type, and returns every problem. On the rare
// document that has any, it walks the document to name each with its
// path, not just the first, and decodes what it can (strings as written,
// unknown fields left out), so that every other check can go on: ok says
// out holds that decoding.
func decodeStrict(doc *Document, out any) (problems []error, ok bool) {
	first := decodeJSON(doc.JSON, out, true)
	if first == nil {
		return nil, true
	}
	typ, js := reflect.TypeOf(out).Elem(), doc.JSON
	if fixed, found := scalarMismatches(doc, typ); len(found) > 0 {
		js, problems = fixed, found
	}
	var generic any
	if err := json.Unmarshal(js, &generic); err != nil {
		return append(problems, docError(doc, apiv1.CodeParse, "", err.Error())), false
	}
	for _, path := range unknownFields(generic, typ, "") {
		problems = append(problems, docError(doc, apiv1.CodeUnknownField, path, "unknown field"))
	}
	reflect.ValueOf(out).Elem().SetZero()
	err := decodeJSON(js, out, false)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr):
		return append(problems, docError(doc, apiv1.CodeParse, typeErr.Field, fmt.Sprintf("is a %s, want %s", typeErr.Value, typeName(typeErr.Type)))), false
	case err != nil || len(problems) == 0:
		return append(problems, docError(doc, apiv1.CodeParse, "", first.Error())), false
	}
	return problems, true
}

func decodeJSON(js []byte, out any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	if strict {
		dec.DisallowUnknownFields()
	}
	return dec.Decode(out)
}

// unknownFields returns the paths of keys in v that typ has no field for.
func unknownFields(v any, typ reflect.Type, path string) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch val := v.(type) {
	case map[string]any:
		if typ.Kind() == reflect.Map {
			var out []string
			for k, item := range val {
				out = append(out, unknownFields(item, typ.Elem(), join(path, k))...)
			}
			return out
		}
		if typ.Kind() != reflect.Struct {
			return nil
		}
		fields := jsonFields(typ)
		var out []string
		for k, item := range val {
			ft, ok := fields[k]
			if !ok {
				out = append(out, join(path, k))
				continue
			}
			out = append(out, unknownFields(item, ft, join(path, k))...)
		}
		slices.Sort(out)
		return out
	case []any:
		if typ.Kind() != reflect.Slice {
			return nil
		}
		var out []string
		for i, item := range val {
			out = append(out, unknownFields(item, typ.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	return nil
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
