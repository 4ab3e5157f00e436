package server

import (
	"io/fs"
	"net/http"
	"path"
	"strings"

	"kiln.dev/kiln/api/openapi"
	apiv1 "kiln.dev/kiln/api/v1alpha1"
)

// openapi serves the OpenAPI document, generated from the API's types.
func (s *Server) openapi(w http.ResponseWriter, _ *http.Request, _ *principal) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openapi.Document)
	return err
}

// schema serves the JSON Schema of a kind, for editors to read.
func (s *Server) schema(w http.ResponseWriter, r *http.Request, _ *principal) error {
	name := r.PathValue("name")
	data, err := fs.ReadFile(openapi.Schemas, path.Join("schemas", name))
	if err != nil || strings.Contains(name, "/") {
		return &httpError{status: http.StatusNotFound, err: &apiv1.Error{
			Code: apiv1.CodeNoSchema, Field: "name",
			Message: "no schema " + name + "; the schemas are " + strings.Join(schemaNames(), ", "),
		}}
	}
	w.Header().Set("Content-Type", "application/schema+json")
	_, err = w.Write(data)
	return err
}

// schemaNames lists the schemas the server has, by name (ReadDir sorts).
func schemaNames() []string {
	entries, _ := fs.ReadDir(openapi.Schemas, "schemas")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
