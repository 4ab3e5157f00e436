package workflow

import (
	"encoding/json"
	"fmt"
	"reflect"

	yaml3 "go.yaml.in/yaml/v3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// scalarMismatches finds the values whose type is not the field's: above
// all the unquoted ones that YAML read as a boolean or a number where the
// schema wants a string (name: n, value: y, value: 1.10), the mistake
// YAML 1.1's booleans invite. It returns one coded error per value,
// naming its field, and the document's JSON with each string turned back
// into the string as written and each other value dropped, so that
// decoding, and every other check, can go on. It is only called once a
// plain decode failed, so it costs nothing on a good document.
func scalarMismatches(doc *Document, typ reflect.Type) ([]byte, []error) {
	var root yaml3.Node
	var generic any
	if yaml3.Unmarshal(doc.Raw, &root) != nil || json.Unmarshal(doc.JSON, &generic) != nil || len(root.Content) == 0 {
		return nil, nil
	}
	w := &scalarWalk{doc: doc}
	generic = w.walk(root.Content[0], generic, typ, "")
	if len(w.errs) == 0 {
		return nil, nil
	}
	js, err := json.Marshal(generic)
	if err != nil {
		return nil, nil
	}
	return js, w.errs
}

type scalarWalk struct {
	doc  *Document
	errs []error
}

// walk visits node, whose JSON value is v, against the Go type it decodes
// into, and returns v with bare scalars in string fields made strings.
func (w *scalarWalk) walk(node *yaml3.Node, v any, typ reflect.Type, path string) any {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.String && reflect.PointerTo(typ).Implements(unmarshalerType) {
		return v // a type that reads itself (a quantity, say) decides for itself
	}
	switch node.Kind {
	case yaml3.MappingNode:
		if m, ok := v.(map[string]any); ok {
			w.mapping(node, m, typ, path)
		}
	case yaml3.SequenceNode:
		if s, ok := v.([]any); ok && typ.Kind() == reflect.Slice && len(s) == len(node.Content) {
			for i := range s {
				s[i] = w.walk(node.Content[i], s[i], typ.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case yaml3.ScalarNode:
		return w.scalar(node, v, typ, path)
	}
	return v
}

func (w *scalarWalk) mapping(node *yaml3.Node, m map[string]any, typ reflect.Type, path string) {
	var fields map[string]reflect.Type
	switch typ.Kind() {
	case reflect.Struct:
		fields = jsonFields(typ)
	case reflect.Map:
	default:
		return
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key := node.Content[i].Value
		ft, known := fieldType(typ, fields, key)
		if !known {
			continue
		}
		if _, ok := m[key]; ok {
			m[key] = w.walk(node.Content[i+1], m[key], ft, join(path, key))
		}
	}
}

// fieldType is the type of key's value in a struct with fields, or in a map.
func fieldType(typ reflect.Type, fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if fields == nil {
		return typ.Elem(), true
	}
	ft, ok := fields[key]
	return ft, ok
}

func (w *scalarWalk) scalar(node *yaml3.Node, v any, typ reflect.Type, path string) any {
	if v == nil {
		return v
	}
	switch typ.Kind() {
	case reflect.String:
		return w.stringScalar(node, v, path)
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			w.add(apiv1.CodeParse, path, fmt.Sprintf("%s is not true or false", node.Value), "write true or false")
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if _, ok := v.(float64); !ok {
			w.add(apiv1.CodeParse, path, fmt.Sprintf("%s is not a number", node.Value), "write a number, without quotes")
			return nil
		}
	}
	return v
}

func (w *scalarWalk) add(code apiv1.Code, path, msg, hint string) {
	w.errs = append(w.errs, &apiv1.Error{Code: code, File: w.doc.File, Object: w.doc.Object(), Field: path, Message: msg, Hint: hint})
}

// stringScalar is a value where a string belongs: as written, if YAML
// read it as something else.
func (w *scalarWalk) stringScalar(node *yaml3.Node, v any, path string) any {
	if _, isString := v.(string); isString || node.Style&(yaml3.DoubleQuotedStyle|yaml3.SingleQuotedStyle) != 0 {
		return v
	}
	msg := fmt.Sprintf("%s is read as the number %v, not a string: YAML reads an unquoted number as a number", node.Value, v)
	if _, isBool := v.(bool); isBool {
		msg = fmt.Sprintf("%s is read as the boolean %v, not a string: YAML reads an unquoted y, n, yes, no, on, off, true or false as a boolean", node.Value, v)
	}
	w.add(apiv1.CodeBareValue, path, msg, fmt.Sprintf("quote it: %q", node.Value))
	return node.Value
}

// rawName is metadata.name as written in raw, for a document whose name
// YAML read as something other than a string.
func rawName(raw []byte) string {
	var doc struct {
		Metadata struct {
			Name yaml3.Node `yaml:"name"`
		} `yaml:"metadata"`
	}
	if yaml3.Unmarshal(raw, &doc) != nil {
		return ""
	}
	return doc.Metadata.Name.Value
}
