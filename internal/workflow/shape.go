package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	yaml3 "go.yaml.in/yaml/v3"
	kresource "k8s.io/apimachinery/pkg/api/resource"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
	"kiln.dev/kiln/internal/resource"
	"kiln.dev/kiln/internal/suggest"
)

var (
	unmarshalerType  = reflect.TypeFor[json.Unmarshaler]()
	quantityType     = reflect.TypeFor[apiv1.Quantity]()
	kubeQuantityType = reflect.TypeFor[kresource.Quantity]()
	// podTemplateType reads itself only to spare encoding/json the pod
	// spec's types until one is written (see its MarshalJSON): its fields
	// are checked as any struct's.
	podTemplateType = reflect.TypeFor[apiv1.PodTemplate]()
	rawJSONType     = reflect.TypeFor[json.RawMessage]()
)

// checkShape checks every value of doc against the Go type it decodes
// into, before anything decodes it, and names each problem with its full
// path (spec.tasks[2].command): a mapping where a list belongs, a number
// too large for its field, an unknown field, an unquoted value that YAML
// read as a boolean or number where a string belongs (name: n, value: y,
// value: 1.10: YAML 1.1's booleans invite it), and a Kubernetes quantity
// (in a podTemplate) that resource.Check refuses, which would make
// decoding hang. It returns the document's JSON with each bare string
// turned back into the string as written and each other bad value or
// unknown field dropped, so that decoding, and every other check, can go
// on; fatal says a problem would make those checks speak of values the
// user did not write (a list dropped leaves a required field empty).
func checkShape(doc *Document, typ reflect.Type) (js []byte, problems []error, fatal bool) {
	generic, ok := genericJSON(doc.JSON)
	if !ok {
		return doc.JSON, nil, false // decoding reports it
	}
	// A first walk without the YAML finds whether there is anything to
	// report; only then is the YAML parsed again, for the spelling and
	// the place of each problem, and the walk done over with it.
	w := &shapeWalk{doc: doc, blind: true}
	generic = w.walk(nil, generic, typ, "")
	if w.needYAML {
		generic, _ = genericJSON(doc.JSON)
		w = &shapeWalk{doc: doc, fields: w.fields}
		generic = w.walk(docNode(doc), generic, typ, "")
	}
	slices.SortStableFunc(w.unknown, func(a, b unknownField) int { return comparePaths(a.path, b.path) })
	problems = w.errs
	for _, u := range w.unknown {
		if !w.tally.keep(apiv1.CodeUnknownField, u.path) {
			continue
		}
		msg := "unknown field"
		if s := suggest.Phrase(u.near(), strconv.Quote); s != "" {
			msg += ", " + s // not "; ", which joins the problems of a dynamic fragment
		}
		problems = append(problems, docError(doc, apiv1.CodeUnknownField, u.path, msg))
	}
	problems = w.tally.capped(problems)
	if !w.changed {
		return doc.JSON, problems, w.fatal
	}
	js, err := json.Marshal(generic)
	if err != nil {
		return doc.JSON, append(problems, docError(doc, apiv1.CodeParse, "", err.Error())), true
	}
	return js, problems, w.fatal
}

// genericJSON decodes js with its numbers kept as written.
func genericJSON(js []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var generic any
	return generic, dec.Decode(&generic) == nil
}

// docNode is the YAML of doc's top value, or nil when there is none.
func docNode(doc *Document) *yaml3.Node {
	var root *yaml3.Node
	if doc.tree != nil {
		root = doc.tree.root()
	} else {
		root = parseTree(doc.Raw)
	}
	if root == nil || len(root.Content) == 0 {
		return nil
	}
	return root.Content[0]
}

// lazyTree is a document's YAML parsed on first use, once for every copy
// of the document.
type lazyTree struct {
	raw  []byte
	once sync.Once
	node *yaml3.Node
}

func (t *lazyTree) root() *yaml3.Node {
	t.once.Do(func() { t.node = parseTree(t.raw) })
	return t.node
}

// parseTree is raw's YAML, nil when it does not parse.
func parseTree(raw []byte) *yaml3.Node {
	root := &yaml3.Node{}
	if yaml3.Unmarshal(raw, root) != nil {
		return nil
	}
	return root
}

// unknownField is a field the schema lacks, at path, written key, among
// fields: those its mapping may hold.
type unknownField struct {
	path, key string
	fields    map[string]reflect.Type
}

// near are the fields beside u that are near its name: looked for only
// for the unknown fields an error lists, not for each of many repeats.
func (u unknownField) near() []string {
	return suggest.Closest(u.key, slices.Collect(maps.Keys(u.fields)))
}

type shapeWalk struct {
	doc  *Document
	errs []error
	// tally keeps the first apiv1.MaxOfKind errors of a kind and counts
	// the rest.
	tally   tally
	unknown []unknownField
	// changed says a value was replaced or dropped; fatal, see checkShape.
	changed, fatal bool
	// blind walks without the YAML: needYAML says it found something
	// whose report needs it (a problem, a boolean that may be a bare y).
	blind, needYAML bool
	// fields holds jsonFields of each struct type met: a 100,000-task
	// spec built them 300,000 times, 210 MB of maps.
	fields map[reflect.Type]map[string]reflect.Type
}

// fieldsOf is jsonFields(typ), built once per walk. Callers read it
// only.
func (w *shapeWalk) fieldsOf(typ reflect.Type) map[string]reflect.Type {
	if f, ok := w.fields[typ]; ok {
		return f
	}
	if w.fields == nil {
		w.fields = map[reflect.Type]map[string]reflect.Type{}
	}
	f := jsonFields(typ)
	w.fields[typ] = f
	return f
}

// walk visits v, whose YAML is node (nil when unknown: a value merged in
// with <<), against the Go type it decodes into, and returns v as it is
// to be decoded.
func (w *shapeWalk) walk(node *yaml3.Node, v any, typ reflect.Type, path string) any {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if node != nil && node.Kind == yaml3.AliasNode {
		node = node.Alias
	}
	switch {
	case v == nil:
		return nil // null is every type's zero
	case typ == quantityType:
		return w.quantity(node, v, path)
	case typ == kubeQuantityType:
		return w.kubeQuantity(node, v, path)
	case typ == rawJSONType:
		return w.anyValue(node, v, path)
	case typ.Kind() != reflect.String && typ != podTemplateType && reflect.PointerTo(typ).Implements(unmarshalerType):
		return v // a type that reads itself decides for itself
	}
	switch typ.Kind() {
	case reflect.Struct, reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return w.mismatch(node, v, typ, path)
		}
		w.mapping(node, m, typ, path)
	case reflect.Slice, reflect.Array:
		if typ.Elem().Kind() == reflect.Uint8 {
			return v // bytes are written as a base64 string
		}
		s, ok := v.([]any)
		if !ok {
			return w.mismatch(node, v, typ, path)
		}
		for i := range s {
			s[i] = w.walk(item(node, i, len(s)), s[i], typ.Elem(), w.itemPath(path, i))
		}
	case reflect.Interface:
	default:
		return w.scalar(node, v, typ, path)
	}
	return v
}

// itemPath is the path of item i of the list at path; none in a blind
// walk, whose problems are reported by the walk done over.
func (w *shapeWalk) itemPath(path string, i int) string {
	if w.blind {
		return ""
	}
	return path + "[" + strconv.Itoa(i) + "]"
}

// item is the YAML of a list's item i, if node is that list.
func item(node *yaml3.Node, i, n int) *yaml3.Node {
	if node == nil || node.Kind != yaml3.SequenceNode || len(node.Content) != n {
		return nil
	}
	return node.Content[i]
}

// mapping walks the values of m, a struct's fields or a map's items, in
// the order they are written, then those merged in with <<. Keys that
// are not a field of the struct, spelt exactly, are unknown and dropped.
func (w *shapeWalk) mapping(node *yaml3.Node, m map[string]any, typ reflect.Type, path string) {
	var fields map[string]reflect.Type
	if typ.Kind() == reflect.Struct {
		fields = w.fieldsOf(typ)
	}
	var keys []string
	values := map[string]*yaml3.Node{}
	if node != nil && node.Kind == yaml3.MappingNode {
		for i := 0; i+1 < len(node.Content); i += 2 {
			k := node.Content[i].Value
			if _, seen := values[k]; !seen && hasKey(m, k) {
				keys, values[k] = append(keys, k), node.Content[i+1]
			}
		}
	}
	var merged []string
	for k := range m {
		if _, ok := values[k]; !ok {
			merged = append(merged, k)
		}
	}
	slices.Sort(merged)
	for _, k := range append(keys, merged...) {
		ft, known := fieldType(typ, fields, k)
		if !known {
			w.needYAML = w.needYAML || w.blind
			w.unknown = append(w.unknown, unknownField{path: join(path, k), key: k, fields: fields})
			delete(m, k)
			w.changed = true
			continue
		}
		m[k] = w.walk(values[k], m[k], ft, join(path, k))
	}
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// fieldType is the type of key's value in a struct with fields, or in a map.
func fieldType(typ reflect.Type, fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if fields == nil {
		return typ.Elem(), true
	}
	ft, ok := fields[key]
	return ft, ok
}

// mismatch reports a value of the wrong kind (a mapping where a list
// belongs) and drops it.
func (w *shapeWalk) mismatch(node *yaml3.Node, v any, typ reflect.Type, path string) any {
	w.add(apiv1.CodeParse, path, fmt.Sprintf("is %s, want %s", describe(node, v), article(typeName(typ))), "")
	w.fatal = true
	return nil
}

func (w *shapeWalk) scalar(node *yaml3.Node, v any, typ reflect.Type, path string) any {
	switch v.(type) {
	case map[string]any, []any:
		return w.mismatch(node, v, typ, path)
	}
	switch typ.Kind() {
	case reflect.String:
		return w.stringScalar(node, v, path)
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			w.add(apiv1.CodeParse, path, fmt.Sprintf("%s is not true or false", written(node, v)), "write true or false")
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return w.number(node, v, typ, path)
	}
	return v
}

// number checks that v is a number its field can hold: a whole number
// for an integer, within the range of the field's type. Each field's own
// range is checked later, with the rest of the spec.
func (w *shapeWalk) number(node *yaml3.Node, v any, typ reflect.Type, path string) any {
	n, ok := v.(json.Number)
	if !ok {
		if s, isString := v.(string); isString && isPlain(node) && hugeNumber(s) {
			w.add(apiv1.CodeOutOfRange, path, fmt.Sprintf("%s is too large a number for this field (%s)", resource.Quote(s), numberRange(typ)), "")
		} else {
			w.add(apiv1.CodeParse, path, fmt.Sprintf("%s is not a number", resource.Quote(written(node, v))), "write a number, without quotes")
		}
		return nil
	}
	f, err := strconv.ParseFloat(string(n), typ.Bits())
	if typ.Kind() == reflect.Float32 || typ.Kind() == reflect.Float64 {
		if err != nil {
			w.add(apiv1.CodeOutOfRange, path, fmt.Sprintf("%s is out of range for this field (%s)", resource.Quote(string(n)), numberRange(typ)), "")
			return nil
		}
		return v
	}
	if fits(string(n), typ) {
		return v
	}
	if err == nil && f == math.Trunc(f) && fitsFloat(f, typ) { // 2.0, 1e3
		w.changed = true
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
	}
	if err == nil && f != math.Trunc(f) {
		w.add(apiv1.CodeParse, path, fmt.Sprintf("%s is not a whole number", resource.Quote(string(n))), "")
		return nil
	}
	w.add(apiv1.CodeOutOfRange, path, fmt.Sprintf("%s is out of range for this field (%s)", resource.Quote(string(n)), numberRange(typ)), "")
	return nil
}

// fits reports whether s is an integer literal that typ holds.
func fits(s string, typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err := strconv.ParseUint(s, 10, typ.Bits())
		return err == nil
	}
	_, err := strconv.ParseInt(s, 10, typ.Bits())
	return err == nil
}

func fitsFloat(f float64, typ reflect.Type) bool {
	lo, hi := intRange(typ)
	return f >= lo && f <= hi
}

func intRange(typ reflect.Type) (lo, hi float64) {
	bits := typ.Bits()
	switch typ.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 0, math.Ldexp(1, bits) - 1
	}
	return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) - 1
}

func numberRange(typ reflect.Type) string {
	bits := typ.Bits()
	switch typ.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a finite number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-bits))
	}
	return fmt.Sprintf("a whole number from %d to %d", int64(math.MinInt64)>>(64-bits), int64(math.MaxInt64)>>(64-bits))
}

// hugeNumber reports whether s is a number YAML left as a string because
// no float holds it (1e400).
func hugeNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return errors.Is(err, strconv.ErrRange)
}

// quantity is a resource quantity of kiln's: a string or a number, which
// validation parses within bounds.
func (w *shapeWalk) quantity(node *yaml3.Node, v any, path string) any {
	switch v.(type) {
	case string, json.Number:
		return v
	case map[string]any, []any:
		return w.mismatch(node, v, quantityType, path)
	}
	w.add(apiv1.CodeQuantity, path, fmt.Sprintf("%s is not a quantity", resource.Quote(written(node, v))), "")
	return nil
}

// kubeQuantity is a Kubernetes quantity, which its own decoder parses:
// it must pass resource.Check first.
func (w *shapeWalk) kubeQuantity(node *yaml3.Node, v any, path string) any {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case json.Number:
		s = string(v)
	default:
		return w.quantity(node, v, path)
	}
	if err := resource.Check(s); err != nil {
		var e *apiv1.Error
		errors.As(err, &e)
		w.add(e.Code, path, e.Message, "")
		return nil
	}
	return v
}

func (w *shapeWalk) add(code apiv1.Code, path, msg, hint string) {
	w.changed = true
	w.needYAML = w.needYAML || w.blind
	if !w.tally.keep(code, path) {
		return
	}
	w.errs = append(w.errs, &apiv1.Error{Code: code, File: w.doc.File, Object: w.doc.Object(), Field: path, Message: msg, Hint: hint})
}

// stringScalar is a value where a string belongs: as written, if YAML
// read it as something else.
func (w *shapeWalk) stringScalar(node *yaml3.Node, v any, path string) any {
	if _, isString := v.(string); isString {
		return v
	}
	as := written(node, v)
	msg := fmt.Sprintf("%s is read as the number %v, not a string: YAML reads an unquoted number as a number", as, v)
	if _, isBool := v.(bool); isBool {
		msg = fmt.Sprintf("%s is read as the boolean %v, not a string: YAML reads an unquoted y, n, yes, no, on, off, true or false as a boolean", as, v)
	}
	w.add(apiv1.CodeBareValue, path, msg, fmt.Sprintf("quote it: %q", as))
	return as
}

// anyValue is a value of any JSON type (a map's item): YAML 1.1's bare
// y, n, yes, no, on and off, read as booleans, are refused with a hint to
// quote them, in it and in the lists and mappings it holds; true and
// false are booleans.
func (w *shapeWalk) anyValue(node *yaml3.Node, v any, path string) any {
	switch v := v.(type) {
	case bool:
		w.needYAML = w.needYAML || w.blind // as written, it may be y or on
		if isPlain(node) && !strings.EqualFold(node.Value, "true") && !strings.EqualFold(node.Value, "false") {
			w.add(apiv1.CodeBareValue, path, fmt.Sprintf("%s is read as the boolean %v: YAML reads an unquoted y, n, yes, no, on or off as a boolean", node.Value, v),
				fmt.Sprintf("quote it: %q, or write %v", node.Value, v))
			return node.Value
		}
	case []any:
		for i := range v {
			v[i] = w.anyValue(item(node, i, len(v)), v[i], w.itemPath(path, i))
		}
	case map[string]any:
		for k := range v {
			v[k] = w.anyValue(mappingValue(node, k), v[k], join(path, k))
		}
	}
	return v
}

// mappingValue is the YAML of key's value, if node is a mapping.
func mappingValue(node *yaml3.Node, key string) *yaml3.Node {
	if node == nil || node.Kind != yaml3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i+1]
		}
	}
	return nil
}

// isPlain reports whether node is an unquoted scalar.
func isPlain(node *yaml3.Node) bool {
	return node != nil && node.Kind == yaml3.ScalarNode && node.Style&(yaml3.DoubleQuotedStyle|yaml3.SingleQuotedStyle|yaml3.LiteralStyle|yaml3.FoldedStyle) == 0
}

// written is a scalar as written, or as read when its YAML is unknown.
func written(node *yaml3.Node, v any) string {
	if node != nil && node.Kind == yaml3.ScalarNode {
		return node.Value
	}
	return fmt.Sprint(v)
}

// describe says what kind of value v is: "a mapping", "the string \"x\"".
func describe(node *yaml3.Node, v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "the string " + resource.Quote(written(node, v))
	case bool:
		return "the boolean " + written(node, v)
	}
	return "the number " + written(node, v)
}

func article(name string) string {
	switch name {
	case "list", "mapping", "quantity":
		return "a " + name
	}
	return "a " + name + " value"
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
