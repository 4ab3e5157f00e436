package apidoc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// schemaRef is where the OpenAPI document keeps its schemas.
const schemaRef = "#/components/schemas/"

// Operations returns every operation of the API.
func Operations() []Operation {
	return slices.Concat(metaOperations(), runOperations(), pageOperations(), artifactOperations(), resourceOperations(), federationOperations(), channelOperations())
}

// OpenAPI builds the OpenAPI 3.0 document of ops from the Go types they
// read and answer.
func OpenAPI(r *Reflector, ops []Operation) (*openapi3.T, error) {
	schemas, err := r.components(ops)
	if err != nil {
		return nil, err
	}
	doc := &openapi3.T{
		OpenAPI: "3.0.3",
		Info:    info(),
		Servers: servers(),
		Paths:   openapi3.NewPaths(),
		Components: &openapi3.Components{
			Schemas:         schemas,
			SecuritySchemes: securitySchemes(),
			Responses:       errorResponses(),
		},
		Security: openapi3.SecurityRequirements{{"bearer": {}}},
		Tags:     tags(),
	}
	for _, op := range ops {
		doc.AddOperation(op.Path, op.Method, operation(op))
	}
	return doc, nil
}

// components reflects every type the operations name, and the error
// answer's, into the document's schemas.
func (r *Reflector) components(ops []Operation) (openapi3.Schemas, error) {
	values := []any{apiv1.ErrorList{}}
	for _, k := range Kinds() {
		values = append(values, k.Type)
	}
	for _, op := range ops {
		if op.Body != nil && op.Body.Type != nil {
			values = append(values, op.Body.Type)
		}
		for _, a := range op.Answers {
			if a.Type != nil {
				values = append(values, a.Type)
			}
		}
	}
	defs, _, err := r.Defs(schemaRef, values...)
	if err != nil {
		return nil, err
	}
	schemas := openapi3.Schemas{}
	for name, raw := range defs {
		s := &openapi3.Schema{}
		raw, err := refsAlone(raw)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := json.Unmarshal(raw, s); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		schemas[name] = openapi3.NewSchemaRef("", s)
	}
	documentSchemas(schemas)
	code := schemas["Error"].Value.Properties["code"].Value
	code.Enum = codes()
	code.Description = "The stable error code; docs/errors.md says what each means and how to fix it."
	return schemas, nil
}

// refsAlone rewrites each reference that has words beside it (a field's
// description), which OpenAPI 3.0 ignores, as an allOf of the reference
// alone, beside which they count.
func refsAlone(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(walk(v, func(m map[string]any) {
		ref, ok := m["$ref"]
		if !ok || len(m) == 1 {
			return
		}
		delete(m, "$ref")
		m["allOf"] = []any{map[string]any{"$ref": ref}}
	}))
}

// codes lists every error code kiln defines.
func codes() []any {
	var out []any
	for _, c := range apiv1.CodeInfos() {
		out = append(out, string(c.Code))
	}
	return out
}

// operation is op as the document has it.
func operation(op Operation) *openapi3.Operation {
	o := &openapi3.Operation{
		OperationID: op.ID,
		Summary:     op.Summary,
		Description: op.Description,
		Tags:        []string{op.Tag},
		Responses:   openapi3.NewResponses(),
		Extensions:  map[string]any{"x-kiln-role": string(op.Role)},
	}
	o.Responses.Delete("default")
	switch op.Role {
	case Public:
		o.Security = &openapi3.SecurityRequirements{}
	case Party:
		o.Security = &openapi3.SecurityRequirements{{"partyCredential": {}}}
	case Channel:
		o.Security = &openapi3.SecurityRequirements{{"channelToken": {}}}
	}
	for _, p := range op.Params {
		o.Parameters = append(o.Parameters, &openapi3.ParameterRef{Value: parameter(p)})
	}
	if op.Body != nil {
		o.RequestBody = &openapi3.RequestBodyRef{Value: requestBody(op.Body)}
	}
	for _, a := range op.Answers {
		o.Responses.Set(strconv.Itoa(a.Status), &openapi3.ResponseRef{Value: answer(a)})
	}
	for _, status := range errorStatuses(op) {
		o.Responses.Set(strconv.Itoa(status), &openapi3.ResponseRef{Ref: "#/components/responses/" + errorResponseName(status)})
	}
	return o
}

// errorStatuses are the statuses of op's refusals: its own, those its
// role brings, those of bad input (400) and of no such object (404) for
// an operation that takes them, and the server's own failure (500).
func errorStatuses(op Operation) []int {
	out := slices.Clone(op.Errors)
	if len(op.Params) > 0 || op.Body != nil {
		out = append(out, http.StatusBadRequest)
	}
	if slices.ContainsFunc(op.Params, func(p Param) bool { return p.In == openapi3.ParameterInPath }) {
		out = append(out, http.StatusNotFound)
	}
	if !op.Unlimited {
		out = append(out, http.StatusInternalServerError)
	}
	switch op.Role {
	case Public:
	case Party, Channel:
		out = append(out, http.StatusUnauthorized)
	default:
		out = append(out, http.StatusUnauthorized, http.StatusForbidden)
	}
	if !op.Unlimited {
		out = append(out, http.StatusTooManyRequests)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// paramDescriptions describe the parameters that mean the same in
// every operation that takes them.
var paramDescriptions = map[string]string{
	"id":      "the run's ID",
	"node":    "a task of the run",
	"task":    "a task of the run",
	"project": "the project; default: default, or the token's one project",
	"run":     "the federated run's ID, the same at every party",
}

func parameter(p Param) *openapi3.Parameter {
	if p.Description == "" {
		p.Description = paramDescriptions[p.Name]
	}
	s := goSchema(p.Type)
	for _, e := range p.Enum {
		s.Enum = append(s.Enum, e)
	}
	s.Default = p.Default
	s.Max = p.Maximum
	return &openapi3.Parameter{
		Name: p.Name, In: p.In, Description: p.Description,
		Required: p.Required || p.In == openapi3.ParameterInPath,
		Schema:   openapi3.NewSchemaRef("", s),
	}
}

// goSchema is the schema of a parameter of v's Go type.
func goSchema(v any) *openapi3.Schema {
	switch v.(type) {
	case bool:
		return openapi3.NewBoolSchema()
	case int:
		return openapi3.NewIntegerSchema()
	case []string:
		return openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema())
	}
	return openapi3.NewStringSchema()
}

func requestBody(b *Body) *openapi3.RequestBody {
	rb := &openapi3.RequestBody{Description: b.Description, Required: !b.Optional, Content: openapi3.Content{}}
	if b.Type != nil {
		rb.Content["application/json"] = openapi3.NewMediaType().WithSchemaRef(ref(b.Type))
		rb.Content["application/json"].Example = b.Example
	}
	for media, schema := range b.Content {
		if schema == nil {
			schema = openapi3.NewSchemaRef("", openapi3.NewStringSchema())
		}
		rb.Content[media] = openapi3.NewMediaType().WithSchemaRef(schema)
		if media == "application/yaml" {
			rb.Content[media].Example = exampleWorkflow
		}
	}
	return rb
}

func answer(a Answer) *openapi3.Response {
	r := openapi3.NewResponse().WithDescription(a.Description)
	if a.Type != nil {
		r.Content = openapi3.NewContentWithJSONSchemaRef(ref(a.Type))
		r.Content["application/json"].Example = a.Example
	}
	if a.Stream != "" {
		if r.Content == nil {
			r.Content = openapi3.Content{}
		}
		schema := openapi3.NewStringSchema()
		if strings.HasSuffix(a.Stream, "json") {
			schema = openapi3.NewObjectSchema()
		}
		r.Content[a.Stream] = openapi3.NewMediaType().WithSchema(described(schema, a.StreamDescription))
	}
	return r
}

// ref refers to the schema of v's type.
func ref(v any) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef(schemaRef+typeName(reflect.TypeOf(v)), nil)
}
