package cli

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/suggest"
)

// unknownConfigField finds the first key of the configuration file data
// (path) that typ, the Go type it decodes into, has no field for: a
// KLN-1002 error at its line and column, naming its path and the fields
// near it, as a spec file's unknown field reads. nil when every key is
// known, or when data is not YAML (decoding then says why).
func unknownConfigField(path string, data []byte, typ reflect.Type) *apiv1.Error {
	var doc yaml3.Node
	if err := yaml3.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return nil //nolint:nilerr // decoding the file says what is wrong with its YAML
	}
	return unknownKey(path, doc.Content[0], typ, "")
}

func unknownKey(path string, node *yaml3.Node, typ reflect.Type, at string) *apiv1.Error {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if node.Kind == yaml3.AliasNode {
		node = node.Alias
	}
	switch {
	case typ.Kind() == reflect.Slice && node.Kind == yaml3.SequenceNode:
		for i, item := range node.Content {
			if e := unknownKey(path, item, typ.Elem(), at+"["+strconv.Itoa(i)+"]"); e != nil {
				return e
			}
		}
	case typ.Kind() == reflect.Map && node.Kind == yaml3.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			if e := unknownKey(path, node.Content[i+1], typ.Elem(), join(at, node.Content[i].Value)); e != nil {
				return e
			}
		}
	case typ.Kind() == reflect.Struct && node.Kind == yaml3.MappingNode:
		fields := jsonFields(typ)
		for i := 0; i+1 < len(node.Content); i += 2 {
			k := node.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				msg := "unknown field"
				near := suggest.Closest(k.Value, keysOf(fields))
				for i, n := range near {
					near[i] = strconv.Quote(n)
				}
				near = append(near, deeper(k.Value, fields)...) // server: belongs in a context
				if s := suggest.Phrase(near[:min(len(near), 3)], func(s string) string { return s }); s != "" {
					msg += ", " + s
				}
				return &apiv1.Error{
					Code: apiv1.CodeUnknownField, File: path, Line: k.Line, Column: k.Column, Field: join(at, k.Value), Message: msg,
					Hint: "the fields here are " + strings.Join(keysOf(fields), ", ") + " (README: KILN_HOME/config.yaml; docs/cli.md: contexts)",
				}
			}
			if e := unknownKey(path, node.Content[i+1], ft, join(at, k.Value)); e != nil {
				return e
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of typ's fields, embedded ones
// included, to their types.
func jsonFields(typ reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "":
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
			}
		case f.IsExported():
			if name == "" {
				name = f.Name
			}
			out[name] = f.Type
		}
	}
	return out
}

// deeper are the fields one level down from fields (in a struct, or in
// the structs of a list) whose names are near word, as paths:
// contexts[].server.
func deeper(word string, fields map[string]reflect.Type) []string {
	var out []string
	for _, name := range keysOf(fields) {
		t := fields[name]
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			if t.Kind() == reflect.Slice {
				name += "[]"
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			continue
		}
		subs := jsonFields(t)
		near := suggest.Closest(word, keysOf(subs))
		if _, ok := subs[word]; ok {
			near = append([]string{word}, near...) // the very name, a level down
		}
		for _, sub := range near {
			out = append(out, name+"."+sub)
		}
	}
	return out
}

func keysOf(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}
