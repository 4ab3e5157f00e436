package apidoc

import "github.com/getkin/kin-openapi/openapi3"

// filesBody is the body of a request that sends spec files, as kiln
// submit and kiln apply do: several files as a form, or one as the body.
var filesBody = &Body{
	Description: "the files: as multipart/form-data, one part per file (its filename names it in errors); or one file as the body, YAML or JSON, named by ?file=",
	Content: map[string]*openapi3.Schema{
		"multipart/form-data": filesForm(),
		"application/yaml":    described(openapi3.NewSchema(), "one file of YAML documents, separated by ---"),
		"application/json":    described(openapi3.NewObjectSchema(), "one document as JSON: a Workflow, a TrainJob, a TrainingRuntime and so on (see /api/v1/schemas/kiln.json)"),
	},
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
	Content: map[string]*openapi3.Schema{
		"text/plain":               openapi3.NewStringSchema(),
		"application/octet-stream": openapi3.NewStringSchema().WithFormat("binary"),
	},
}

// described is s with description d.
func described(s *openapi3.Schema, d string) *openapi3.Schema {
	s.Description = d
	return s
}
