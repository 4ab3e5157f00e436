package apidoc

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// module is kiln's module path, which the Go comments are keyed by.
const module = "kiln.dev/kiln"

// commentDirs are the packages, relative to the module's root, whose doc
// comments become the schemas' descriptions.
var commentDirs = []string{"api/v1alpha1", "api/trainer/v1alpha1", "api/kubeflow/v1", "api/argo/v1alpha1"}

// Reflector turns Go types into JSON Schemas, their descriptions taken
// from the types' doc comments.
type Reflector struct {
	r *jsonschema.Reflector
}

// NewReflector reads the doc comments of kiln's API packages; it must
// run in the module's root directory, as go generate and the tests do.
// Strict schemas refuse properties the type does not have, as kiln
// refuses unknown fields in what users write.
func NewReflector(strict bool) (*Reflector, error) {
	if _, err := os.Stat("go.mod"); err != nil {
		return nil, fmt.Errorf("the schemas' descriptions are read from the sources: run in kiln's module root: %w", err)
	}
	r := &jsonschema.Reflector{
		AllowAdditionalProperties: !strict,
		Mapper:                    mapType,
		Namer:                     typeName,
	}
	for _, dir := range commentDirs {
		if err := r.AddGoComments(module, dir, jsonschema.WithFullComment()); err != nil {
			return nil, err
		}
	}
	for key, text := range r.CommentMap {
		r.CommentMap[key] = unwrap(text)
	}
	return &Reflector{r: r}, nil
}

// Defs reflects each value's type and returns the schemas of every type
// they reach, by name, and the name of each value's own. A schema refers
// to another as refPrefix+name.
func (r *Reflector) Defs(refPrefix string, values ...any) (map[string]json.RawMessage, []string, error) {
	defs := map[string]json.RawMessage{}
	var roots []string
	for _, v := range values {
		s := r.r.Reflect(v)
		name := typeName(reflect.TypeOf(v))
		roots = append(roots, name)
		for n, d := range s.Definitions {
			raw, err := rewriteRefs(d, refPrefix)
			if err != nil {
				return nil, nil, fmt.Errorf("schema of %s: %w", n, err)
			}
			defs[n] = raw
		}
	}
	return defs, roots, nil
}

// rewriteRefs marshals a schema with its references to refPrefix+name,
// and with keywords from after draft 7 in their older spelling.
func rewriteRefs(s *jsonschema.Schema, refPrefix string) (json.RawMessage, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(walk(v, func(m map[string]any) {
		if ref, ok := m["$ref"].(string); ok {
			m["$ref"] = refPrefix + strings.TrimPrefix(ref, "#/$defs/")
		}
		anyValue(m)
		if enc, ok := m["contentEncoding"]; ok && enc == "base64" {
			delete(m, "contentEncoding")
			m["format"] = "byte"
		}
	}))
}

// anyValue spells a schema that takes any value, which the reflector
// writes as true (a json.RawMessage), as {}: OpenAPI 3.0 has no boolean
// schemas.
func anyValue(m map[string]any) {
	if props, ok := m["properties"].(map[string]any); ok {
		for name, p := range props {
			if p == true {
				props[name] = map[string]any{}
			}
		}
	}
	if m["items"] == true {
		m["items"] = map[string]any{}
	}
}

// walk calls f on every object within v, depth first, and returns v.
func walk(v any, f func(map[string]any)) any {
	switch x := v.(type) {
	case map[string]any:
		for _, child := range x {
			walk(child, f)
		}
		f(x)
	case []any:
		for _, child := range x {
			walk(child, f)
		}
	}
	return v
}

// typeName names a type's schema: its Go name, prefixed for the packages
// of other API groups, whose names repeat kiln's own.
func typeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case strings.HasSuffix(t.PkgPath(), "/api/trainer/v1alpha1"):
		return "Trainer" + t.Name()
	case strings.HasSuffix(t.PkgPath(), "/api/kubeflow/v1"):
		return "Kubeflow" + t.Name()
	case strings.HasSuffix(t.PkgPath(), "/api/argo/v1alpha1"):
		return "Argo" + t.Name()
	}
	return t.Name()
}

// unwrap joins the lines of each paragraph of a doc comment: the
// schema's reader wraps them as it needs.
func unwrap(text string) string {
	paragraphs := strings.Split(strings.TrimSpace(text), "\n\n")
	for i, p := range paragraphs {
		paragraphs[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paragraphs, "\n\n")
}

var quantityType = reflect.TypeFor[apiv1.Quantity]()

// enums are the values of kiln's string types that take a few.
var enums = map[reflect.Type][]string{
	reflect.TypeFor[apiv1.Phase]():             values(apiv1.PhasePending, apiv1.PhaseWaiting, apiv1.PhaseRunning, apiv1.PhaseRetrying, apiv1.PhaseFailing, apiv1.PhaseCancelling, apiv1.PhaseSucceeded, apiv1.PhaseFailed, apiv1.PhaseCancelled, apiv1.PhaseSkipped, apiv1.PhaseSuspended),
	reflect.TypeFor[apiv1.NodeKind]():          values(apiv1.NodeKindCommand, apiv1.NodeKindTrain, apiv1.NodeKindInitializer, apiv1.NodeKindMap, apiv1.NodeKindDynamic, apiv1.NodeKindSubworkflow, apiv1.NodeKindGate, apiv1.NodeKindSensor, apiv1.NodeKindExit, apiv1.NodeKindFederated),
	reflect.TypeFor[apiv1.CacheMode]():         values(apiv1.CacheOn, apiv1.CacheOff, apiv1.CacheOverwrite),
	reflect.TypeFor[apiv1.RerunMode]():         values(apiv1.RerunFrom, apiv1.RerunOnly, apiv1.RerunUntil),
	reflect.TypeFor[apiv1.TriggerRule]():       values(apiv1.TriggerAllSucceeded, apiv1.TriggerAllDone, apiv1.TriggerOneSucceeded, apiv1.TriggerOneFailed, apiv1.TriggerNoneFailed),
	reflect.TypeFor[apiv1.GateTimeoutAction](): values(apiv1.GateTimeoutFail, apiv1.GateTimeoutSucceed, apiv1.GateTimeoutSkip),
	reflect.TypeFor[apiv1.RestartPolicy]():     values(apiv1.RestartPolicyNever, apiv1.RestartPolicyOnFailure, apiv1.RestartPolicyAlways, apiv1.RestartPolicyExitCode),
	reflect.TypeFor[apiv1.CleanPodPolicy]():    values(apiv1.CleanPodPolicyNone, apiv1.CleanPodPolicyRunning, apiv1.CleanPodPolicyAll),
	reflect.TypeFor[apiv1.RuntimeSource]():     values(apiv1.RuntimeSourceBuiltin, apiv1.RuntimeSourceFiles, apiv1.RuntimeSourceStored, apiv1.RuntimeSourceOverridden),
	reflect.TypeFor[apiv1.ApplyAction]():       values(apiv1.ApplyCreated, apiv1.ApplyConfigured, apiv1.ApplyUnchanged, apiv1.ApplyReplaced),
}

func values[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// mapType gives the schemas of types whose JSON is not what their Go
// shape says: quantities, and Kubernetes' own types, which are described
// by Kubernetes and taken as written.
func mapType(t reflect.Type) *jsonschema.Schema {
	if t == quantityType {
		return quantity("")
	}
	if vs, ok := enums[t]; ok {
		s := &jsonschema.Schema{Type: "string"}
		for _, v := range vs {
			s.Enum = append(s.Enum, v)
		}
		return s
	}
	if !strings.HasPrefix(t.PkgPath(), "k8s.io/") {
		return nil
	}
	switch t.Name() {
	case "Quantity":
		return quantity(" (Kubernetes)")
	case "IntOrString":
		return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "integer"}, {Type: "string"}}}
	case "Time":
		return &jsonschema.Schema{Type: "string", Format: "date-time"}
	}
	return &jsonschema.Schema{
		Type:        "object",
		Description: fmt.Sprintf("A Kubernetes %s (%s), as the Kubernetes API reference describes it.", t.Name(), strings.TrimPrefix(t.PkgPath(), "k8s.io/")),
	}
}

// quantity is the schema of a resource quantity: a string such as
// "500m" or "4Gi", or a bare number.
func quantity(of string) *jsonschema.Schema {
	return &jsonschema.Schema{
		Description: "A resource quantity" + of + ": a string such as \"500m\", \"2\" or \"4Gi\", or a bare number.",
		OneOf:       []*jsonschema.Schema{{Type: "string"}, {Type: "number"}},
	}
}
