package apidoc

import "github.com/getkin/kin-openapi/openapi3"

// filesBody is the body of a request that sends spec files, as kiln
// submit and kiln apply do: several files as a form, or one as the body,
// YAML or JSON. A JSON body is one document, of the schema named by
// jsonDoc; what it may be is described by what.
func filesBody(jsonDoc, what string) *Body {
	return &Body{
		Description: "the files: as multipart/form-data, one part per file (its filename names it in errors); or one file as the body, YAML or JSON, named by ?file=",
		Content: map[string]*openapi3.SchemaRef{
			"multipart/form-data": openapi3.NewSchemaRef("", filesForm()),
			"application/yaml": openapi3.NewSchemaRef("", described(openapi3.NewStringSchema(),
				"one file of YAML documents, separated by ---: "+what)),
			"application/json": openapi3.NewSchemaRef(schemaRef+jsonDoc, nil),
		},
	}
}

// filesForm is the form of a request that sends several files.
func filesForm() *openapi3.Schema {
	binary := openapi3.NewStringSchema().WithFormat("binary")
	text := openapi3.NewStringSchema()
	return openapi3.NewObjectSchema().
		WithProperty("file", described(openapi3.NewArraySchema().WithItems(binary), "one part per file; its filename, directories and all, names it in errors")).
		WithProperty("param", described(openapi3.NewArraySchema().WithItems(text), "name=value, one part per parameter")).
		WithProperty("project", text).
		WithProperty("workdir", text).
		WithProperty("cache", openapi3.NewStringSchema().WithEnum("on", "off", "overwrite"))
}

// secretBody is a secret's value, sent as the body's bytes.
var secretBody = &Body{
	Description: "the secret's value, as is",
	Content: map[string]*openapi3.SchemaRef{
		"text/plain":               openapi3.NewSchemaRef("", openapi3.NewStringSchema()),
		"application/octet-stream": openapi3.NewSchemaRef("", openapi3.NewStringSchema().WithFormat("binary")),
	},
}

// described is s with description d.
func described(s *openapi3.Schema, d string) *openapi3.Schema {
	s.Description = d
	return s
}
